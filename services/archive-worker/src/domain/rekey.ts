import { NotFoundError } from '@screenfleet/contracts';
import type { ArchiveStore } from '@screenfleet/storage';
import {
  ArchiveObjectCorruptError,
  openBytes,
  PLAIN,
  sealBytes,
  sealOf,
  type ArchiveKeyring,
  type EncodedChunk,
  type OpenKeys,
  type Seal,
} from './chunk-codec';
import type { ManifestEntry } from './manifest';
import type { UnreadableObject } from './restore';

export interface RekeyDeps {
  archive: Pick<ArchiveStore, 'list' | 'get' | 'put' | 'verify' | 'delete'>;
  /** Its writer seals every object anew (none: the objects are written plain). */
  keyring: ArchiveKeyring;
  /** What opens the objects as they are (openKeysFor). */
  keys: OpenKeys;
  /**
   * Called once, before the first object is written under the new seal (not at all when nothing
   * needs it): the caller records the seal in the state's sealed_with, so that a start without
   * its key is refused even when this rekey is interrupted (the end's sealedWith narrows it).
   */
  recordSeal: (seal: Seal) => Promise<void>;
  /** Asked before each manifest: false once the rekey no longer holds the task lease. */
  stillHeld?: () => boolean;
  /** Called after each chunk is rekeyed with the bytes it added (negative: removed). */
  onRekeyed?: (change: { bytes: number }) => Promise<void>;
}

export interface RekeyReport {
  /** Manifests looked at. */
  manifests: number;
  /** Chunks (with their manifest and media) sealed anew under the current key. */
  rekeyed: number;
  /** Chunks that were sealed with it already. */
  current: number;
  /** Objects that could not be read (their chunk is left as it is). */
  unreadable: UnreadableObject[];
  /** What the objects are sealed with afterwards (the archive state's sealed_with). */
  sealedWith: Seal[];
}

/** Thrown when a written object is not in the store as written: nothing old was removed. */
export class RekeyNotVerifiedError extends Error {
  constructor(key: string) {
    super(`rekey: ${key} is not in the store as written (verify failed); nothing was removed`);
  }
}

/**
 * Seals every archived chunk, its media files and its manifest anew under the keyring's writer
 * (plain when it has none), so that older keys can be dropped: for each manifest whose seal is
 * not the writer's, the chunk and each media file are opened (checked against the manifest's
 * SHA-256), sealed again and written under their new keys (named by their new SHA-256), each
 * verified in the store and read back and opened with the new key; then the manifest is
 * rewritten, in place, naming them, and verified the same way; only then are the old chunk and
 * media objects deleted. A crash at any point leaves a manifest that names objects that are
 * there (old or new), and at most unreferenced copies, which the sweep at the next lease
 * takeover removes. A manifest sealed with the writer is current: its chunk and media were
 * rewritten before it. Runs holding the task lease (no pass or restore meanwhile).
 */
export async function rekeyArchive(deps: RekeyDeps): Promise<RekeyReport> {
  const target: Seal = deps.keyring.writer?.id ?? PLAIN;
  const report: RekeyReport = {
    manifests: 0,
    rekeyed: 0,
    current: 0,
    unreadable: [],
    sealedWith: [],
  };
  const left = new Set<Seal>();
  let recorded = false;
  const writerKeys: OpenKeys = {
    readers: deps.keyring.writer ? [deps.keyring.writer] : [],
    acceptPlain: !deps.keyring.writer,
  };

  /** Writes, verifies in the store, reads back and opens with the new key. */
  async function putChecked(key: string, sealed: EncodedChunk): Promise<void> {
    await deps.archive.put(key, sealed.body, { sha256: sealed.sha256 });
    if (!(await deps.archive.verify(key, sealed.sha256))) throw new RekeyNotVerifiedError(key);
    openBytes(await deps.archive.get(key), writerKeys, { name: key, sha256: sealed.sha256 });
  }

  for await (const object of deps.archive.list('manifests/')) {
    if (deps.stillHeld && !deps.stillHeld()) {
      throw new Error(
        `rekey: lost the archive's task lease after ${report.rekeyed} chunks (is the state store reachable?): run it again`,
      );
    }
    report.manifests += 1;
    const body = await deps.archive.get(object.key);
    if (sealOf(body) === target) {
      report.current += 1;
      continue;
    }
    let manifest: ManifestEntry;
    let chunk: Buffer;
    let media: Array<{ entry: ManifestEntry['media'][number]; plain: Buffer }>;
    try {
      manifest = JSON.parse(
        openBytes(body, deps.keys, { name: object.key }).toString('utf8'),
      ) as ManifestEntry;
      chunk = openBytes(await deps.archive.get(manifest.chunk_key), deps.keys, {
        name: manifest.chunk_key,
        sha256: manifest.sha256,
      });
      media = [];
      for (const entry of manifest.media) {
        const plain = openBytes(await deps.archive.get(entry.key), deps.keys, {
          name: entry.key,
          sha256: entry.sha256,
        });
        media.push({ entry, plain });
      }
    } catch (error) {
      if (!(
        error instanceof ArchiveObjectCorruptError ||
        error instanceof NotFoundError ||
        error instanceof SyntaxError
      )) {
        throw error;
      }
      report.unreadable.push({ key: object.key, reason: error.message });
      const seal = sealOf(body);
      if (seal) left.add(seal); // damage (no seal) is no key the archive needs
      continue;
    }

    if (!recorded) {
      await deps.recordSeal(target);
      recorded = true;
    }
    const sealedChunk = sealBytes(chunk, deps.keyring.writer);
    const chunkKey = withSha(manifest.chunk_key, manifest.sha256, sealedChunk.sha256);
    await putChecked(chunkKey, sealedChunk);
    const newMedia = [];
    for (const { entry, plain } of media) {
      const sealed = sealBytes(plain, deps.keyring.writer);
      const key = withSha(entry.key, entry.sha256, sealed.sha256);
      await putChecked(key, sealed);
      newMedia.push({ ...entry, key, sha256: sealed.sha256, size: sealed.body.length });
    }
    const rewritten: ManifestEntry = {
      ...manifest,
      chunk_key: chunkKey,
      sha256: sealedChunk.sha256,
      size: sealedChunk.body.length,
      media: newMedia,
    };
    const sealedManifest = sealBytes(Buffer.from(JSON.stringify(rewritten)), deps.keyring.writer);
    await putChecked(object.key, sealedManifest);

    // The new manifest names the new objects: the old ones can go.
    const old = [manifest.chunk_key, ...manifest.media.map((entry) => entry.key)];
    const kept = new Set([chunkKey, ...newMedia.map((entry) => entry.key)]);
    for (const key of old) if (!kept.has(key)) await deps.archive.delete(key);
    report.rekeyed += 1;
    await deps.onRekeyed?.({
      bytes:
        sealedManifest.body.length -
        body.length +
        sealedChunk.body.length -
        manifest.size +
        newMedia.reduce((n, entry) => n + entry.size, 0) -
        manifest.media.reduce((n, entry) => n + entry.size, 0),
    });
  }
  report.sealedWith = [target, ...[...left].filter((seal) => seal !== target)].sort();
  return report;
}

/** An object key named by its SHA-256 (chunk and media keys), renamed for new bytes. */
function withSha(key: string, oldSha: string, newSha: string): string {
  if (!key.includes(oldSha)) throw new Error(`rekey: ${key} is not named by its SHA-256`);
  return key.replace(oldSha, newSha);
}
