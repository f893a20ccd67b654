/**
 * libsql's promise API (the package's "./promise" export, whose own types our module resolution
 * does not reach): only what the reader connections use (sqlite-readers.ts).
 */
declare module 'libsql/promise' {
  export interface Statement {
    /** Runs the statement's first step on libsql's threads; later rows are stepped on the caller's. */
    all(...params: unknown[]): Promise<unknown[]>;
  }
  export default class Database {
    constructor(path: string, options?: object);
    exec(sql: string): Promise<unknown>;
    prepare(sql: string): Promise<Statement>;
    /** sqlite3_interrupt: the statement running on this connection stops with SQLITE_INTERRUPT. */
    interrupt(): void;
    close(): void;
  }
}
