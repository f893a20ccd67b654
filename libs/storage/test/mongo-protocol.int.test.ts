import { MongoClient, MongoBulkWriteError, type WriteError } from 'mongodb';
import { databaseName, mongoUrl } from '../../../test/services';

// The store adapters rely on these server behaviours; this proves the test server has them.
describe('the MongoDB-protocol test server', () => {
  let client: MongoClient;
  const dbName = databaseName('roundtrip');

  beforeAll(async () => {
    client = await MongoClient.connect(mongoUrl(), { serverSelectionTimeoutMS: 5000 });
  });

  afterAll(async () => {
    await client.db(dbName).dropDatabase();
    await client.close();
  });

  it('when documents are inserted, then find returns them with dates and arrays intact', async () => {
    const items = client.db(dbName).collection<{ _id: string; at: Date; tags: string[] }>('items');
    const at = new Date('2026-11-22T10:00:00.123Z');
    await items.insertMany([
      { _id: 'a', at, tags: ['x', 'y'] },
      { _id: 'b', at: new Date(at.getTime() + 1000), tags: [] },
    ]);

    const found = await items
      .find({ at: { $gte: at } })
      .sort({ at: 1 })
      .toArray();

    expect(found).toEqual([
      { _id: 'a', at, tags: ['x', 'y'] },
      { _id: 'b', at: new Date(at.getTime() + 1000), tags: [] },
    ]);
  });

  it('when an unordered insert repeats _ids, then it reports 11000 per duplicate and stores the rest once', async () => {
    const items = client.db(dbName).collection<{ _id: string }>('dups');
    await items.insertMany([{ _id: 'a' }, { _id: 'b' }]);

    const error = await items
      .insertMany([{ _id: 'a' }, { _id: 'c' }, { _id: 'b' }], { ordered: false })
      .then(
        () => undefined,
        (e: unknown) => e,
      );

    expect(error).toBeInstanceOf(MongoBulkWriteError);
    const bulkError = error as MongoBulkWriteError;
    expect(bulkError.code).toBe(11000);
    const writeErrors = ([] as WriteError[]).concat(bulkError.writeErrors);
    expect(writeErrors.map((w) => [w.index, w.code])).toEqual([
      [0, 11000],
      [2, 11000],
    ]);
    expect(bulkError.insertedCount).toBe(1);
    expect(await items.find().sort({ _id: 1 }).toArray()).toEqual([
      { _id: 'a' },
      { _id: 'b' },
      { _id: 'c' },
    ]);
  });
});
