import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSqliteDeadLetters, openSqliteDatabase } from '@screenfleet/storage';

// A real file: a dead letter must be as durable as the items it stands for.
describe('sqlite dead letters', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-dead-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('when letters are added, then after the file is closed and opened again they are listed oldest first, whole', async () => {
    const file = path.join(dir, 'screenfleet.db');
    const first = await openSqliteDatabase(file);
    const letters = createSqliteDeadLetters({ database: first });
    const message = { message_id: 'm-1', payload: { items: ['a', 'é'] } };
    await letters.add('ingest.content.v2', message, 'delivery limit 10 reached');
    await letters.add('ingest.content.v2', { message_id: 'm-2' }, 'poison');
    await letters.close();
    await first.close(); // close() above left the shared database open

    const again = createSqliteDeadLetters({ file });
    const listed = await again.list();
    await again.close();

    expect(listed).toEqual([
      {
        seq: 1,
        queue: 'ingest.content.v2',
        reason: 'delivery limit 10 reached',
        message,
        at: expect.any(Date),
      },
      {
        seq: 2,
        queue: 'ingest.content.v2',
        reason: 'poison',
        message: { message_id: 'm-2' },
        at: expect.any(Date),
      },
    ]);
  });
});
