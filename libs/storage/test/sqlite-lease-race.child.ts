// A second process on the same SQLite file, for sqlite.archive-state-store.int.test.ts: waits for
// "go", then tries to take the lease once per round and reports the rounds it won.
import { createSqliteArchiveStateStore } from '@screenfleet/storage';

const [file, holder, rounds, baseMs, roundMs] = process.argv.slice(2);

async function race(): Promise<number[]> {
  const store = createSqliteArchiveStateStore({ file: file! });
  const won: number[] = [];
  try {
    for (let round = 0; round < Number(rounds); round += 1) {
      const now = new Date(Number(baseMs) + round * Number(roundMs));
      if (await store.acquireLease(holder!, Number(roundMs) / 2, now)) won.push(round);
    }
  } finally {
    await store.close();
  }
  return won;
}

process.once('message', () => {
  race().then(
    (won) => process.send!({ won }, () => process.exit(0)),
    (error: unknown) => process.send!({ error: String(error) }, () => process.exit(1)),
  );
});
process.send!('ready');
