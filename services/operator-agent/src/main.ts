import { runDistributed } from '@screenfleet/modes';
import { operatorAgentService } from './start';

void runDistributed(operatorAgentService);
