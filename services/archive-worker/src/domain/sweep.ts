import { NotFoundError } from '@screenfleet/contracts';
import type { ArchiveObject, ArchiveStore } from '@screenfleet/storage';
import { ArchiveObjectCorruptError, openBytes, type OpenKeys } from './chunk-codec';
import { objectOfChunk, type ManifestEntry } from './manifest';

export interface SweepDeps {
  archive: Pick<ArchiveStore, 'list' | 'get' | 'delete' | 'removeUnfinished'>;
  /** What opens the manifests (openKeysFor). */
  keys: OpenKeys;
}

export interface SweepReport {
  /** Chunk and media objects no manifest names, removed. */
  orphans: { count: number; bytes: number };
  /** Temp files of writes that never finished (filesystem store), removed. */
  unfinished: { count: number; bytes: number };
  /** Item sets left as they are though they look odd, and why (logged). */
  kept: Array<{ itemSet: string; reason: string }>;
  /** The bytes the store holds afterwards: storage_used. */
  storedBytes: number;
}

interface ItemSetObjects {
  manifest?: ArchiveObject;
  chunks: ArchiveObject[];
  media: Array<ArchiveObject & { index: number }>;
}

/**
 * Removes what crashes left in the archive store, called by a worker when it takes the lease,
 * holding the task lease (no pass, restore or rekey of its own can be writing), before its first
 * pass: chunk and media objects that no manifest names (a crash between their upload and the
 * manifest's, or a copy beside the one its manifest names: encrypted, a re-upload has other
 * bytes and so another key), and the temp files of writes killed mid-file. One listing, the
 * same that gives storage_used. A manifest is read only for an item set with more objects than
 * one upload writes; one that cannot be read, or that names a chunk that is not there, keeps
 * every object of its item set (nothing is deleted on a guess). A worker past its lease could
 * still write a manifest naming a copy removed here only if that one put stalled for longer
 * than the lease (the pass confirms its lease right before it), the assumption the lease makes.
 */
export async function sweepArchive(deps: SweepDeps): Promise<SweepReport> {
  const report: SweepReport = {
    orphans: { count: 0, bytes: 0 },
    unfinished: { count: 0, bytes: 0 },
    kept: [],
    storedBytes: 0,
  };
  const sets = new Map<string, ItemSetObjects>();
  for await (const object of deps.archive.list('')) {
    report.storedBytes += object.size;
    const of = objectOfChunk(object.key);
    if (!of) continue;
    const set = sets.get(of.itemSet) ?? { chunks: [], media: [] };
    sets.set(of.itemSet, set);
    if (of.kind === 'manifest') set.manifest = object;
    else if (of.kind === 'chunk') set.chunks.push(object);
    else set.media.push({ ...object, index: of.index! });
  }
  for (const [itemSet, set] of sets) {
    for (const object of await unnamed(itemSet, set)) {
      await deps.archive.delete(object.key);
      report.orphans.count += 1;
      report.orphans.bytes += object.size;
      report.storedBytes -= object.size;
    }
  }
  report.unfinished = await deps.archive.removeUnfinished();
  return report;

  /** The objects of an item set its manifest does not name. */
  async function unnamed(itemSet: string, set: ItemSetObjects): Promise<ArchiveObject[]> {
    const objects = [...set.chunks, ...set.media];
    if (!set.manifest) return objects; // never named: the upload died before its manifest
    const indices = new Set(set.media.map((media) => media.index));
    if (set.chunks.length === 1 && indices.size === set.media.length) return []; // as uploaded
    let manifest: ManifestEntry;
    try {
      const body = await deps.archive.get(set.manifest.key);
      const text = openBytes(body, deps.keys, { name: set.manifest.key }).toString('utf8');
      manifest = JSON.parse(text) as ManifestEntry;
    } catch (error) {
      if (!(
        error instanceof ArchiveObjectCorruptError ||
        error instanceof NotFoundError ||
        error instanceof SyntaxError
      )) {
        throw error;
      }
      report.kept.push({ itemSet, reason: `its manifest cannot be read: ${error.message}` });
      return [];
    }
    if (!set.chunks.some((chunk) => chunk.key === manifest.chunk_key)) {
      report.kept.push({ itemSet, reason: `its manifest names ${manifest.chunk_key}, not there` });
      return [];
    }
    const named = new Set([manifest.chunk_key, ...manifest.media.map((media) => media.key)]);
    return objects.filter((object) => !named.has(object.key));
  }
}
