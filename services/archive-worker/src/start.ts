import { topology } from '@screenfleet/contracts';
import type { Service, ServiceRunning } from '@screenfleet/modes';
import { createArchiveWorker } from './archive-worker';
import { archiveConfigSpec } from './config';
import { describeArchiveStore, openArchiveStore } from './open-stores';
import { archiveWorkerSettings } from './settings';

/**
 * The archive worker on its mode's ports: its main.ts, or one of the embedded process's
 * services. `archiveStore` says where the archive goes, for the launcher's start lines.
 */
export const archiveWorkerService: Service<
  typeof archiveConfigSpec,
  ServiceRunning & { archiveStore: string }
> = {
  name: 'archive-worker',
  spec: archiveConfigSpec,
  async start({ config, logger, registry, onStop }, ports) {
    const settings = archiveWorkerSettings(config, ports.identity);
    const content = await ports.contentStore();
    const state = await ports.archiveStateStore();
    const audit = await ports.auditStore();
    const archive = openArchiveStore(config);
    onStop('close the archive store', () => archive.close());
    const bus = await ports.bus({ topology });
    const worker = createArchiveWorker({
      bus,
      content,
      archive,
      state,
      audit,
      logger,
      registry,
      ...settings,
    });
    await worker.start();
    onStop('stop answering and finish the chunk in hand', () => worker.stop());
    return { archiveStore: describeArchiveStore(config) };
  },
};
