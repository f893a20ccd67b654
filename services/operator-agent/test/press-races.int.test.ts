/**
 * A key lands on the element a press names, or nowhere: the two races that once put keys on the
 * wrong element, run many times on a real desktop (Xvfb + AT-SPI + Chromium). What arrived where
 * is read from the page's own keydown records.
 *
 * - Focus reported late: Chromium answers AT-SPI from its browser process's copy of the page,
 *   which lags the page. After a Tab, the input left still said "focused", so the next press on
 *   it waited for nothing and its key went to the input Tab had moved to.
 * - An element the page removed or replaced: for a moment Chromium still answers for it, and
 *   focusing it did not fail.
 *
 * Each press goes the agent's way (pressByIndex: re-check, focus, key) on indexes of a listing.
 */
import { ConflictError, type KeyName } from '@screenfleet/contracts';
import { waitFor } from '@screenfleet/runtime';
import type { UiElement } from '../src/desktop';
import { pressByIndex } from '../src/domain/press-by-index';
import { SnapshotStore } from '../src/domain/snapshots';
import { listedWith, useLinuxDesktop } from './support/linux-desktop-suite';
import { PAGE_FIELDS, type KeydownReport } from './support/test-page';

const INPUTS = PAGE_FIELDS.map((field) => field.id);
const DIGITS = '1234567890'.split('') as KeyName[];
const TOKEN = 'races';

describe('presses on a real desktop while the page moves on', () => {
  const { harness: h, desktop: d } = useLinuxDesktop(100);
  const snapshots = new SnapshotStore(60_000);

  /** Lists the page (until all of it is exposed) as the device's snapshot: index by DOM id. */
  async function listForm(): Promise<Map<string, number>> {
    const elements = await listedWith(d(), INPUTS);
    snapshots.save('chromium', elements, Date.now(), TOKEN);
    return new Map(elements.map((e: UiElement, i) => [e.domId ?? '', i]));
  }

  const press = (index: number, key: KeyName, modifiers: Array<'ctrl'> = []) =>
    pressByIndex(d(), snapshots, { elementIndex: index, key, modifiers, requestedBy: TOKEN });

  /** Every keydown the page reported once `count` of them matching `which` have come. */
  const reported = (which: (r: KeydownReport) => boolean, count: number) =>
    waitFor(() => h().keydowns().filter(which).length >= count && h().keydowns().filter(which), {
      timeoutMs: 10_000,
      what: () => `${count} keydowns (got ${h().keydowns().filter(which).length})`,
    });

  test('when tab and ctrl+<digit> alternate on the inputs 300 times, then every key lands on the input it named', async () => {
    const index = await listForm();
    const first = h().keydowns().length;
    const named: string[] = [];
    for (let i = 0; i < 150; i++) {
      // Tab on an input moves the page's focus on at once; the next press names the input
      // left (the race), the one Tab moved to, or the other.
      const left = INPUTS[i % INPUTS.length] as string;
      const next = INPUTS[(i * 7 + (i >> 2)) % INPUTS.length] as string;
      await press(index.get(left) as number, 'tab');
      await press(index.get(next) as number, DIGITS[i % DIGITS.length] as KeyName, ['ctrl']);
      named.push(left, next);
    }
    const mine = (r: KeydownReport) => r.seq > first && (r.key === 'Tab' || /^Digit/.test(r.code));
    const landed = [...(await reported(mine, 300))]
      .sort((a, b) => a.seq - b.seq)
      .map((r) => `${r.key === 'Tab' ? 'tab' : r.code} on ${r.activeId}`);
    const wanted = named.map((id, i) =>
      i % 2 === 0 ? `tab on ${id}` : `Digit${DIGITS[(i >> 1) % DIGITS.length]} on ${id}`,
    );
    expect(landed).toEqual(wanted);
  });

  test('when the page removes or replaces an element and a press names its old index, 200 times, then no key lands anywhere', async () => {
    const startSeq = Math.max(
      0,
      ...h()
        .keydowns()
        .map((r) => r.seq),
    );
    const outcomes = new Map<string, number>();
    for (let round = 0; round < 200; round++) {
      const index = await listForm();
      const id = INPUTS[round % INPUTS.length] as string;
      const target = index.get(id) as number;
      // Every other round the element has the focus when it goes.
      if (round % 4 < 2)
        await d().focus(
          snapshots.current(Date.now(), undefined, TOKEN).elements[target] as UiElement,
        );
      const replace = round % 2 === 0;
      if (replace) await h().replaceElement(id);
      else await h().removeElement(id);
      const outcome = await press(target, 'q').then(
        () => 'pressed',
        (error: unknown) =>
          error instanceof ConflictError
            ? `409 ${error.message.replace(/'.*'/, '…')}`
            : String(error),
      );
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      if (!replace) await h().restoreElement(id);
    }
    // What the page saw: a marker pressed on a live input after all rounds, and nothing before it.
    const index = await listForm();
    await press(index.get('first') as number, 'm');
    const marker = await h().waitForKeydown((r) => r.code === 'KeyM', 5000);
    const seen = await waitFor(
      () =>
        h()
          .keydowns()
          .filter((r) => r.seq < marker.seq).length >=
          marker.seq - 1 && h().keydowns(),
      { timeoutMs: 5000, what: 'every report before the marker' },
    );
    expect(seen.filter((r) => r.seq > startSeq && r.seq < marker.seq)).toEqual([]);
    expect([...outcomes.keys()].filter((outcome) => !outcome.startsWith('409'))).toEqual([]);
    expect([...outcomes.values()].reduce((a, b) => a + b, 0)).toBe(200);
  });
});
