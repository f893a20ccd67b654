import type { SqliteDatabase } from './sqlite-database';
import type { WriteArgs, WriteName } from './sqlite-writer.operations';
import { toStoreError } from './store-errors';

/**
 * How each SQLite store reaches its database: `run(operation, work)` gives `work` the database
 * once the store's tables are there (created on first use, as a Mongo collection is, by the
 * writer operation `schema`; a failed creation is tried again by the next call), and turns any
 * error into the port's (toStoreError, naming the store).
 */
export function sqliteStoreAccess<N extends WriteName>(
  source: { open(): Promise<SqliteDatabase> },
  schema: { write: N; args: WriteArgs<N> },
  storeName: string,
) {
  let created: Promise<unknown> | undefined;
  function ensureSchema({ writer }: SqliteDatabase): Promise<unknown> {
    created ??= writer.write(schema.write, schema.args).catch((error: unknown) => {
      created = undefined;
      throw error;
    });
    return created;
  }

  return {
    run: async <T>(
      operation: string,
      work: (database: SqliteDatabase) => Promise<T>,
    ): Promise<T> => {
      try {
        const database = await source.open();
        await ensureSchema(database);
        return await work(database);
      } catch (error) {
        throw toStoreError(error, operation, storeName);
      }
    },
    /** The next call runs the schema's DDL again (it is idempotent: a dropped index comes back). */
    createAgain: (): void => {
      created = undefined;
    },
  };
}
