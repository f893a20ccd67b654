import { runDistributed } from '@screenfleet/modes';
import { gatewayService } from './start';

void runDistributed(gatewayService);
