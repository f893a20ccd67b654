import { createMongoArchiveStateStore } from './mongo.archive-state-store';
import { createSqliteArchiveStateStore } from './sqlite.archive-state-store';

// Refused before anything is opened; the stores themselves are in test/*.int.test.ts.
describe('archive state store options', () => {
  it('mongo: when neither url nor client is given, then it says so', () => {
    expect(() => createMongoArchiveStateStore({ database: 'any' })).toThrow(/url or a client/);
  });

  it('sqlite: when neither file nor database is given, then it says so', () => {
    expect(() => createSqliteArchiveStateStore({})).toThrow(/file or a database/);
  });
});
