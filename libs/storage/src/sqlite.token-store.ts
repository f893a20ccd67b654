import { databaseFor, type SqliteDatabase } from './sqlite-database';
import { sqliteStoreAccess } from './sqlite-store-access';
import {
  codeByHashQuery,
  codesOf,
  listQuery,
  tokensOf,
  tokenTables,
  type TokenTableNames,
} from './sqlite.token-schema';
import { enrolRefusal, tokenConflict, type TokenStore } from './token-store';

export interface SqliteTokenStoreOptions {
  /** A database shared with other stores (openSqliteDatabase); close() leaves it open. */
  database?: SqliteDatabase;
  /** Or a file this store opens on first use and closes on close(). */
  file?: string;
  tokensTable?: string;
  codesTable?: string;
}

/**
 * TokenStore in two tables of the embedded mode's SQLite file (sqlite.token-schema.ts). Every
 * write is one operation of the writer thread, which runs one at a time inside its transaction:
 * a revocation, a last use or taking a code's use is a conditional UPDATE there, with nothing
 * that FerretDB makes the Mongo adapter work around. Lists and the code an enrol starts from are
 * read on a reader connection.
 */
export function createSqliteTokenStore(options: SqliteTokenStoreOptions): TokenStore {
  const source = databaseFor(options, 'token store');
  const names: TokenTableNames = {
    tokensTable: options.tokensTable ?? 'tokens',
    codesTable: options.codesTable ?? 'enrolment_codes',
  };
  const tables = tokenTables(names);

  const translated = sqliteStoreAccess(
    source,
    { write: 'tokens.schema', args: names },
    'token store',
  ).run;

  async function rows({ readers }: SqliteDatabase, query: { text: string; params: unknown[] }) {
    const [row] = await readers.query<{ rows: string }>(query.text, query.params);
    return row!.rows;
  }

  return {
    ensureSchema: () => translated('ensureSchema', () => Promise.resolve()),

    insertToken: (token) =>
      translated('insertToken', async ({ writer }) => {
        const taken = await writer.write('tokens.insertToken', { ...names, token });
        if (taken) throw tokenConflict('token', token.id, taken);
      }),

    listTokens: ({ includeRevoked = false } = {}) =>
      translated('listTokens', async (database) =>
        tokensOf(await rows(database, listQuery(tables, 'tokens', includeRevoked))),
      ),

    revokeToken: (id, at) =>
      translated('revokeToken', ({ writer }) =>
        writer.write('tokens.revokeToken', { ...names, id, atMs: at.getTime() }),
      ),

    recordLastUse: (uses) =>
      translated('recordLastUse', async ({ writer }) => {
        if (uses.length === 0) return;
        await writer.write(
          'tokens.recordLastUse',
          { ...names, uses: uses.map(({ id, at }) => ({ id, atMs: at.getTime() })) },
          uses.length,
        );
      }),

    insertEnrolmentCode: (code) =>
      translated('insertEnrolmentCode', async ({ writer }) => {
        const taken = await writer.write('tokens.insertCode', { ...names, code });
        if (taken) throw tokenConflict('enrolment code', code.id, taken);
      }),

    listEnrolmentCodes: ({ includeRevoked = false } = {}) =>
      translated('listEnrolmentCodes', async (database) =>
        codesOf(await rows(database, listQuery(tables, 'codes', includeRevoked))),
      ),

    revokeEnrolmentCode: (id, at) =>
      translated('revokeEnrolmentCode', ({ writer }) =>
        writer.write('tokens.revokeCode', { ...names, id, atMs: at.getTime() }),
      ),

    enrol: (codeHash, at, makeToken) =>
      translated('enrol', async (database) => {
        const [code] = codesOf(await rows(database, codeByHashQuery(tables, codeHash)));
        if (!code) return { ok: false, reason: 'unknown' } as const;
        // Refused here without the writer when it already says so (none of these states
        // passes); a live code is checked again by the writer, with the use taken.
        const refusal = enrolRefusal(code, at);
        if (refusal) return { ok: false, reason: refusal } as const;
        const token = makeToken(code);
        const written = await database.writer.write('tokens.enrol', {
          ...names,
          enrol: { codeId: code.id, atMs: at.getTime(), token },
        });
        switch (written.outcome) {
          case 'enrolled':
            return { ok: true, token, code } as const;
          case 'refused':
            return { ok: false, reason: written.reason } as const;
          case 'conflict':
            throw tokenConflict('token', token.id, written.field);
        }
      }),

    close: () => source.close(),
  };
}
