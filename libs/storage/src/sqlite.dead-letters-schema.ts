import type Database from 'libsql';

type Statements = (sql: string) => Database.Statement;

export function ensureDeadLettersSchema(db: Database.Database, table: string): void {
  db.exec(`CREATE TABLE IF NOT EXISTS ${table} (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    queue TEXT NOT NULL,
    reason TEXT NOT NULL,
    message TEXT NOT NULL,
    at_ms INTEGER NOT NULL
  )`);
}

export interface NewDeadLetter {
  queue: string;
  reason: string;
  /** The message as it was published, kept as its JSON. */
  message: unknown;
  atMs: number;
}

export function addDeadLetter(sql: Statements, table: string, letter: NewDeadLetter): void {
  sql(`INSERT INTO ${table} (queue, reason, message, at_ms) VALUES (?, ?, ?, ?)`).run(
    letter.queue,
    letter.reason,
    JSON.stringify(letter.message),
    letter.atMs,
  );
}

/** Removes these dead letters (by seq); returns how many there were. */
export function removeDeadLetters(sql: Statements, table: string, seqs: number[]): number {
  return sql(`DELETE FROM ${table} WHERE seq IN (SELECT value FROM json_each(?))`).run(
    JSON.stringify(seqs),
  ).changes;
}
