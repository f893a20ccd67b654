import { runDistributed } from '@screenfleet/modes';
import { ingestWorkerService } from './start';

void runDistributed(ingestWorkerService);
