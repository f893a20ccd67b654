/** What the store contract suites share: a fresh place per test, and what a call rejected with. */

/**
 * Call inside a contract's describe: `makeFixture` runs before each test, and each store
 * `open()` returned is closed after it, before the fixture's cleanup. `fixture()` is the
 * current test's.
 */
export function storesPerTest<
  F extends { open(): { close(): Promise<void> }; cleanup(): Promise<void> },
>(makeFixture: () => Promise<F>): { open: () => ReturnType<F['open']>; fixture: () => F } {
  type Store = ReturnType<F['open']>;
  let fixture: F;
  const opened: Store[] = [];

  beforeEach(async () => {
    fixture = await makeFixture();
  });

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    await fixture.cleanup();
  });

  return {
    open: () => {
      const store = fixture.open() as Store;
      opened.push(store);
      return store;
    },
    fixture: () => fixture,
  };
}

/** The error `promise` rejects with; a test failure when it resolves instead. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection, but it resolved');
    },
    (error: unknown) => error,
  );
}
