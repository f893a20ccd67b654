import { runDistributed } from '@screenfleet/modes';
import { archiveWorkerService } from './start';

void runDistributed(archiveWorkerService);
