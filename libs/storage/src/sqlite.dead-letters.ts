import { tableName } from './sqlite-connection';
import { databaseFor, type SqliteDatabase } from './sqlite-database';
import { sqliteStoreAccess } from './sqlite-store-access';

export interface SqliteDeadLettersOptions {
  /** A database shared with other stores (openSqliteDatabase); close() leaves it open. */
  database?: SqliteDatabase;
  /** Or a file this table opens on first use and closes on close(). */
  file?: string;
  table?: string;
}

export interface DeadLetter {
  /** Its place in the table: what remove() takes. */
  seq: number;
  queue: string;
  reason: string;
  /** The message as it was published (an Envelope), parsed back from its JSON. */
  message: unknown;
  at: Date;
}

/**
 * Where the embedded mode's in-process bus puts a message no handler could take (poison, or
 * past its delivery limit): a table in the same SQLite file, so a dead letter is as durable as
 * the items, and the publisher's confirm (which waits for it) still means "kept". The distributed
 * mode's equivalent is the ingest.content.dead queue; `npm run dead-letters:replay` empties
 * either.
 */
export function createSqliteDeadLetters(options: SqliteDeadLettersOptions) {
  const source = databaseFor(options, 'dead-letter table');
  const name = options.table ?? 'dead_letters';
  const table = tableName(name, 'table');

  const attempt = sqliteStoreAccess(
    source,
    { write: 'deadLetters.schema', args: { table: name } },
    'dead-letter table',
  ).run;

  return {
    add: (queue: string, message: unknown, reason: string): Promise<void> =>
      attempt('add', ({ writer }) =>
        writer.write('deadLetters.add', {
          table: name,
          letter: { queue, message, reason, atMs: Date.now() },
        }),
      ),
    /** Oldest first, from after `afterSeq` when given. */
    list: (limit = 100, afterSeq = 0): Promise<DeadLetter[]> =>
      attempt('list', async ({ readers }) => {
        const [row] = await readers.query<{ rows: string }>(
          `SELECT json_group_array(json_object(
             'seq', seq, 'queue', queue, 'reason', reason, 'message', message, 'at_ms', at_ms)
             ORDER BY seq)
             AS rows
           FROM (SELECT * FROM ${table} WHERE seq > ? ORDER BY seq LIMIT ?)`,
          [afterSeq, limit],
        );
        const rows = JSON.parse(row!.rows) as Array<{
          seq: number;
          queue: string;
          reason: string;
          message: string;
          at_ms: number;
        }>;
        return rows.map((letter) => ({
          seq: letter.seq,
          queue: letter.queue,
          reason: letter.reason,
          message: JSON.parse(letter.message) as unknown,
          at: new Date(letter.at_ms),
        }));
      }),
    /** The newest letter's seq, 0 when there is none. */
    newestSeq: (): Promise<number> =>
      attempt('newestSeq', async ({ readers }) => {
        const [row] = await readers.query<{ seq: number }>(
          `SELECT coalesce(max(seq), 0) AS seq FROM ${table}`,
          [],
        );
        return row!.seq;
      }),
    /** Removes these dead letters (a replay that stored them); returns how many there were. */
    remove: (seqs: number[]): Promise<number> =>
      attempt('remove', ({ writer }) =>
        seqs.length === 0
          ? Promise.resolve(0)
          : writer.write('deadLetters.remove', { table: name, seqs }),
      ),
    close: () => source.close(),
  };
}

export type SqliteDeadLetters = ReturnType<typeof createSqliteDeadLetters>;
