/**
 * What crashes leave is cleaned (issue 28, item 5), in both modes: chunk copies no manifest
 * names (counted in storage_used, never deleted before) and, in a filesystem archive, the hidden
 * temp files of writes killed mid-file. The worker that takes the lease sweeps them before its
 * first pass, and a pass that replaces a manifest removes the copies it named; afterwards
 * storage_used is what the store holds, and for a directory the bytes on disk.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { archiveKeyring, createArchiver, type ArchiverDeps } from '@screenfleet/archive-worker';
import {
  allItems,
  archivedKeys,
  item,
  settings,
  storesOf,
  waitUntil,
  workerFor,
  type Mode,
  type Stores,
} from './support';

/** Every file's bytes below `dir`, hidden ones included: what the disk holds. */
function bytesOnDisk(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    bytes += entry.isDirectory() ? bytesOnDisk(full) : statSync(full).size;
  }
  return bytes;
}

async function bytesListed(s: Stores): Promise<number> {
  let bytes = 0;
  for await (const object of s.archive.list('')) bytes += object.size;
  return bytes;
}

/** The item set of a chunk or manifest key: its name without the kind and the checksum. */
const itemSet = (key: string) =>
  key.replace(/^(chunks|manifests)\//, '').replace(/(-[0-9a-f]{64}\.jsonl\.gz|\.json)\.sfa$/, '');

describe.each<Mode>(['distributed', 'embedded'])(
  'the sweep of crash leftovers, %s mode',
  (mode) => {
    let s: Stores;
    const workers: Array<{ stop(): Promise<void> }> = [];
    const keyring = archiveKeyring([randomBytes(32)]);

    beforeEach(async () => {
      s = await storesOf(mode);
    });
    afterEach(async () => {
      for (const worker of workers.splice(0)) await worker.stop();
      await s.close();
    });

    /** A pass that dies (never returns) at the put of a key matching `at`. */
    function dyingPass(at: RegExp) {
      let died = false;
      const deps: ArchiverDeps = {
        content: s.content,
        archive: {
          ...s.archive,
          put: (key, body, options) => {
            if (!at.test(key)) return s.archive.put(key, body, options);
            died = true;
            return new Promise<never>(() => undefined); // the process is gone
          },
        },
        state: s.state,
        keyring,
        chunkSize: 3,
        defaults: settings(),
      };
      void createArchiver(deps).runPass();
      return () => died;
    }

    it('when a crash left a chunk no manifest names, and (directory) writes killed mid-file, then the worker taking the lease removes them before its first pass, and storage_used is the bytes stored', async () => {
      const olds = Array.from({ length: 6 }, (_, i) => item(30 - i / 10));
      await s.content.insertItems(olds);
      const died = dyingPass(/^manifests\//);
      await waitUntil(() => Promise.resolve(died()), Boolean);
      expect(await archivedKeys(s.archive, 'chunks/')).toHaveLength(1); // uploaded, never named
      // That item set never comes again: one of its items was deleted meanwhile.
      await s.content.deleteByIds([olds[1]!._id]);
      if (s.dir) {
        const day = readdirSync(path.join(s.dir, 'chunks'), { recursive: true })
          .map(String)
          .find((p) => /^\d{4}\/\d{2}\/\d{2}$/.test(p))!;
        writeFileSync(path.join(s.dir, 'chunks', day, '.x.sfa.0a0a0a0a0a0a.partial'), 'half');
        writeFileSync(
          path.join(s.dir, 'chunks', day, '.y.sfa.0b0b0b0b0b0b.partial'),
          Buffer.alloc(500_000), // as large as the file it was writing
        );
      }

      const worker = workerFor(s, { keyring });
      workers.push(worker);
      await worker.start();
      await waitUntil(
        () => allItems(s.content),
        (docs) => docs.length === 0,
      );
      await worker.stop();

      const chunks = await archivedKeys(s.archive, 'chunks/');
      const manifests = (await archivedKeys(s.archive, 'manifests/')).map(itemSet);
      expect(chunks.map(itemSet).sort()).toEqual([...manifests].sort());
      const state = await s.state.load(undefined as never);
      expect(state.storage_used).toBe(await bytesListed(s));
      if (s.dir) expect(state.storage_used).toBe(bytesOnDisk(s.dir));
    });

    it('when a crash left a chunk copy beside the one its manifest names (killed between upload and record, encrypted), then the pass that archives the items again removes the copy it replaced', async () => {
      await s.content.insertItems(Array.from({ length: 3 }, (_, i) => item(30 - i / 10)));
      let crashed = false;
      void createArchiver({
        content: s.content,
        archive: s.archive,
        state: s.state,
        keyring,
        chunkSize: 3,
        defaults: settings(),
        onStep: (step) => {
          if (step !== 'uploaded') return Promise.resolve();
          crashed = true;
          return new Promise<never>(() => undefined);
        },
      }).runPass();
      await waitUntil(() => Promise.resolve(crashed), Boolean);

      const worker = workerFor(s, { keyring });
      workers.push(worker);
      await worker.start();
      await waitUntil(
        () => allItems(s.content),
        (docs) => docs.length === 0,
      );
      await worker.stop();

      expect(await archivedKeys(s.archive, 'chunks/')).toHaveLength(1);
      const state = await s.state.load(undefined as never);
      expect(state.storage_used).toBe(await bytesListed(s));
      if (s.dir) expect(state.storage_used).toBe(bytesOnDisk(s.dir));
    });
  },
);
