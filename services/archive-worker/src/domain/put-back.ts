import {
  deletedRangeCovers,
  initialArchiveState,
  type ArchivedChunkCleanup,
  type ArchiveSettings,
} from '@screenfleet/contracts';
import type {
  ArchiveStateStore,
  ArchiveStore,
  ContentDocument,
  ContentStore,
} from '@screenfleet/storage';
import { decodeChunk, type ArchiveKeyring } from './chunk-codec';
import { chunkSha256 } from './manifest';

/** What putting a chunk's items back needs: the archiver's deps, with its clock. */
export interface PutBackDeps {
  content: Pick<ContentStore, 'insertItems' | 'deleteByIds'>;
  archive: Pick<ArchiveStore, 'get'>;
  state: Pick<ArchiveStateStore, 'load'>;
  keyring?: ArchiveKeyring;
  defaults: ArchiveSettings;
  now: () => Date;
}

/**
 * Puts the chunk's items back as restored ones (off their devices' archive counts again),
 * except those a delete recorded since they were archived covers: the new holder may have
 * deleted them (POST /data/delete-*), which putting them back would undo. Checked again once
 * they are in, for a delete recorded meanwhile.
 */
export async function putBack(
  deps: PutBackDeps,
  pending: ArchivedChunkCleanup,
  docs?: readonly ContentDocument[],
) {
  const ids = new Set(pending.item_ids);
  const archived =
    docs ??
    decodeChunk(
      await deps.archive.get(pending.chunk_key),
      // Its key names the SHA-256 of its bytes: nothing else is accepted, plain or not.
      { readers: deps.keyring?.readers ?? [], acceptPlain: true },
      { name: pending.chunk_key, sha256: chunkSha256(pending.chunk_key) },
    );
  const deletedSince = async () => {
    const { deleted_ranges = [] } = await deps.state.load(
      initialArchiveState(deps.defaults, deps.now()),
    );
    const archivedAt = pending.archived_at;
    return (doc: ContentDocument) =>
      archivedAt !== undefined &&
      deleted_ranges.some((deleted) => deletedRangeCovers(deleted, doc, archivedAt));
  };
  const covered = await deletedSince();
  const back = archived.filter((doc) => ids.has(doc._id) && !covered(doc));
  await deps.content.insertItems(back, { restored: true });
  const coveredNow = await deletedSince();
  const undo = back.filter(coveredNow).map((doc) => doc._id);
  if (undo.length > 0) await deps.content.deleteByIds(undo, { archived: true });
}
