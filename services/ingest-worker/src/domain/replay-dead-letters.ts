import {
  queueNames,
  SCHEMA_VERSION,
  validators,
  type ContentBatch,
  type Envelope,
} from '@screenfleet/contracts';
import { ContentRejectedError, type ContentStore, type DeadLetter } from '@screenfleet/storage';
import { toDocuments } from './to-documents';

/** Where the embedded mode keeps its dead letters (the SQLite file's dead_letters table). */
export interface DeadLetterTable {
  /** Oldest first, after `afterSeq`. */
  list(limit: number, afterSeq: number): Promise<DeadLetter[]>;
  /** The newest letter's seq (0 when empty). */
  newestSeq(): Promise<number>;
  remove(seqs: number[]): Promise<number>;
}

export interface ReplayReport {
  /** Written to the store (or found there already) and removed from the table. */
  replayed: number;
  /** Left in the table, each with why: not a content batch, or refused again. */
  left: Array<{ seq: number; reason: string }>;
}

/**
 * The embedded mode's `dead-letters:replay`: each dead-lettered content batch is written as the
 * ingest worker writes it (toDocuments, an idempotent insert), then removed; a crash between the
 * two replays it again, which its ids make harmless. A batch the store refuses again, or a
 * letter that is no content batch, stays where it is, with the reason reported. At most `limit`
 * letters, and only those present at the start, so nothing is replayed twice in one run. A store
 * outage (StoreUnavailableError) stops the run: what was replayed stays replayed.
 */
export async function replayDeadLetters(
  table: DeadLetterTable,
  store: Pick<ContentStore, 'insertItems'>,
  limit = Number.POSITIVE_INFINITY,
): Promise<ReplayReport> {
  const report: ReplayReport = { replayed: 0, left: [] };
  let after = 0;
  let seen = 0;
  const last = await table.newestSeq();
  while (seen < limit) {
    const letters = await table.list(Math.min(100, limit - seen), after);
    const present = letters.filter((letter) => letter.seq <= last);
    if (present.length === 0) break;
    for (const letter of present) {
      seen += 1;
      after = letter.seq;
      const batch = contentBatchOf(letter);
      if (typeof batch === 'string') {
        report.left.push({ seq: letter.seq, reason: batch });
        continue;
      }
      try {
        await store.insertItems(toDocuments(batch));
      } catch (error) {
        if (!(error instanceof ContentRejectedError)) throw error;
        report.left.push({ seq: letter.seq, reason: `refused again: ${error.message}` });
        continue;
      }
      await table.remove([letter.seq]);
      report.replayed += 1;
    }
  }
  return report;
}

/** The letter's content batch, or why it is none. */
function contentBatchOf(letter: DeadLetter): ContentBatch | string {
  if (letter.queue !== queueNames.ingestContent) return `from queue ${letter.queue}, not content`;
  const envelope = letter.message as Partial<Envelope>;
  if (envelope.type !== 'content.batch' || envelope.schema_version !== SCHEMA_VERSION) {
    return `not a content.batch v${SCHEMA_VERSION}`;
  }
  const errors = validators.contentBatch.check(envelope.payload);
  if (errors.length > 0) return `invalid content batch: ${errors[0]!.detail}`;
  return envelope.payload as ContentBatch;
}
