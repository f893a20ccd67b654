import type { ArchiveState } from '@screenfleet/contracts';
import type { ArchiveStore } from '@screenfleet/storage';
import {
  NO_ID,
  openBytes,
  PLAIN,
  sealOf,
  type ArchiveKeyring,
  type OpenKeys,
  type Seal,
} from './chunk-codec';
import type { UnreadableObject } from './restore';

/**
 * What opens the archive's objects now: every configured key, and plain objects unless the
 * state knows there are none (then a plain object was not written by this archive). An archive
 * without keys reads plain objects, as it writes them; without a state (a script, a test),
 * plain objects are read.
 */
export function openKeysFor(
  keyring: ArchiveKeyring | undefined,
  state: Pick<ArchiveState, 'sealed_with'> = {},
): OpenKeys {
  return {
    readers: keyring?.readers ?? [],
    acceptPlain:
      !keyring?.writer || state.sealed_with === undefined || state.sealed_with.includes(PLAIN),
  };
}

/** What the manifests are sealed with, and those no configured key opens (the first few named). */
export interface SealScan {
  seals: Seal[];
  unreadable: UnreadableObject[];
  unreadableCount: number;
}

/** Objects named in a refusal; the count says how many there are in all. */
const NAMED = 5;

/**
 * Reads every manifest (small; each is sealed with the key of its chunk and media files) and
 * says what it is sealed with. An object from before key ids is opened with each configured key
 * to learn which one it is.
 */
export async function scanSeals(
  archive: Pick<ArchiveStore, 'list' | 'get'>,
  keyring: ArchiveKeyring | undefined,
): Promise<SealScan> {
  const readers = keyring?.readers ?? [];
  const seals = new Set<Seal>();
  const scan: SealScan = { seals: [], unreadable: [], unreadableCount: 0 };
  const unreadable = (key: string, reason: string) => {
    scan.unreadableCount += 1;
    if (scan.unreadable.length < NAMED) scan.unreadable.push({ key, reason });
  };
  for await (const object of archive.list('manifests/')) {
    const body = await archive.get(object.key);
    const seal = sealOf(body);
    if (seal === undefined) continue; // damage is a restore's to report, not a key problem
    if (seal === PLAIN) {
      seals.add(PLAIN);
    } else if (seal === NO_ID) {
      const opener = readers.find((reader) => opens(body, reader, object.key));
      if (opener) seals.add(opener.id);
      else {
        seals.add(NO_ID);
        unreadable(object.key, 'encrypted before key ids; none of the configured keys opens it');
      }
    } else {
      seals.add(seal);
      if (!readers.some((reader) => reader.id === seal)) {
        unreadable(object.key, `sealed with key ${seal}, not among ARCHIVE_ENCRYPTION_KEYS`);
      }
    }
  }
  scan.seals = [...seals].sort();
  return scan;
}

function opens(body: Buffer, reader: { id: string; key: Buffer }, name: string): boolean {
  try {
    openBytes(body, { readers: [reader], acceptPlain: false }, { name });
    return true;
  } catch {
    return false;
  }
}

/** True when the state says every object is sealed with a configured key (or plain). */
export function sealsReadable(
  keyring: ArchiveKeyring | undefined,
  sealedWith: readonly Seal[] | undefined,
): boolean {
  if (sealedWith === undefined) return false;
  const readers = keyring?.readers ?? [];
  return sealedWith.every((seal) => seal === PLAIN || readers.some((r) => r.id === seal));
}

/** The start's refusal: the objects no configured key opens, and the two ways on. */
export function unreadableAtStartMessage(scan: SealScan): string {
  const named = scan.unreadable.map((object) => `${object.key} (${object.reason})`).join('; ');
  const more =
    scan.unreadableCount > scan.unreadable.length
      ? `; and ${scan.unreadableCount - scan.unreadable.length} more`
      : '';
  return (
    `the archive holds ${scan.unreadableCount} manifest${scan.unreadableCount === 1 ? '' : 's'} ` +
    `that none of the configured keys opens (their chunks and media files neither): ${named}${more}. ` +
    'Add the missing keys to ARCHIVE_ENCRYPTION_KEYS (after the newest, which writes), or set ' +
    'ARCHIVE_ALLOW_UNREADABLE=true to start anyway (their items cannot be restored; a restore ' +
    'names them)'
  );
}
