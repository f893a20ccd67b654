import { AppError } from '@screenfleet/contracts';
import type { Desktop, ElementRef, UiElement } from '../desktop/desktop';
import { toListing } from './listing';
import { clickByIndex, pressByIndex, typeByIndex } from './press-by-index';
import { SnapshotStore } from './snapshots';

function buildElement(overrides: Partial<UiElement> = {}): UiElement {
  return {
    role: 'entry',
    name: 'First name',
    bounds: { x: 10, y: 20, width: 200, height: 30 },
    app: 'Chromium',
    window: 'Operator test page',
    ref: ':1.5/org/a11y/atspi/accessible/1' as ElementRef,
    interactability: 'definite',
    ...overrides,
  };
}

const page = [
  buildElement({ role: 'document web', name: '', interactability: 'sometimes' }),
  buildElement({ name: 'First name' }),
  buildElement({ name: 'Last name', bounds: { x: 10, y: 60, width: 200, height: 30 } }),
  buildElement({ role: 'push button', name: 'Submit' }),
];

/** A desktop that records what was done to it; `now` says what describe() answers. */
function fakeDesktop(now: (e: UiElement) => UiElement | null = (e) => e) {
  const calls: string[] = [];
  const desktop: Desktop = {
    listElements: async () => page,
    describe: async (e) => now(e),
    focus: async (e) => {
      calls.push(`focus ${e.name}`);
    },
    pressKey: async (key, modifiers) => {
      calls.push(`press ${[...modifiers, key].join('+')}`);
    },
    click: async (e) => {
      calls.push(`click ${e.name}`);
    },
    typeText: async (e, text) => {
      calls.push(`type ${JSON.stringify(text)} into ${e.name}`);
    },
    close: async () => undefined,
  };
  return { desktop, calls };
}

/** Both clocks at `ms` (wall time for the snapshot, monotonic for the deadline). */
const at = (ms: number) => ({ wall: () => ms, monotonic: () => ms });

const press = { elementIndex: 2, key: 'k' as const, modifiers: ['ctrl' as const] };

describe('press by index', () => {
  it('when the element is unchanged, then it is focused and the key pressed', async () => {
    const snapshots = new SnapshotStore(30_000);
    snapshots.save('chromium', page, 1000);
    const { desktop, calls } = fakeDesktop();

    const message = await pressByIndex(desktop, snapshots, press, at(2000));

    expect(calls).toEqual(['focus Last name', 'press ctrl+k']);
    expect(message).toMatch(/pressed ctrl\+k on element 2 \(entry 'Last name'\)/);
  });

  it.each<[string, (e: UiElement) => UiElement | null, RegExp]>([
    ['gone', () => null, /gone/],
    ['renamed', (e) => ({ ...e, name: 'Surname' }), /changed.*name 'Last name' -> 'Surname'/],
    ['moved', (e) => ({ ...e, bounds: { ...e.bounds, y: 99 } }), /changed.*bounds moved/],
    ['another role', (e) => ({ ...e, role: 'label' }), /changed.*role/],
  ])('when the element is %s, then 409 and nothing is pressed', async (_, now, message) => {
    const snapshots = new SnapshotStore(30_000);
    snapshots.save('chromium', page, 1000);
    const { desktop, calls } = fakeDesktop(now);

    const error = await pressByIndex(desktop, snapshots, press, at(2000)).catch((e: unknown) => e);

    expect(error).toMatchObject({ code: 'conflict', message: expect.stringMatching(message) });
    expect(calls).toEqual([]);
  });

  it('when there is no listing or it expired, then 409', async () => {
    const snapshots = new SnapshotStore(5000);
    const { desktop, calls } = fakeDesktop();
    await expect(pressByIndex(desktop, snapshots, press, at(0))).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/no element listing/),
    });
    snapshots.save('chromium', page, 1000);
    await expect(pressByIndex(desktop, snapshots, press, at(6000))).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/expired/),
    });
    expect(calls).toEqual([]);
  });

  it('when the index is past the listing, then 400 naming the range', async () => {
    const snapshots = new SnapshotStore(30_000);
    snapshots.save('chromium', page, 1000);
    const { desktop } = fakeDesktop();
    const error: unknown = await pressByIndex(
      desktop,
      snapshots,
      { ...press, elementIndex: 4 },
      at(2000),
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'validation_failed' });
    expect((error as AppError).fieldErrors[0]?.detail).toMatch(/0 to 3/);
  });

  it('when the key press fails, then operation_failed with the reason', async () => {
    const snapshots = new SnapshotStore(30_000);
    snapshots.save('chromium', page, 1000);
    const { desktop } = fakeDesktop();
    desktop.pressKey = () => Promise.reject(new Error('XTest refused'));
    await expect(pressByIndex(desktop, snapshots, press, at(2000))).rejects.toMatchObject({
      code: 'operation_failed',
      message: 'the key press failed: XTest refused',
    });
  });

  it('when a second listing races the press, then a press naming the first listing is 409 and nothing is pressed', async () => {
    const snapshots = new SnapshotStore(30_000);
    const first = snapshots.save('chromium', page, 1000);
    const second = snapshots.save('gedit', [buildElement({ name: 'Editor' })], 1500);
    const { desktop, calls } = fakeDesktop();

    await expect(
      pressByIndex(desktop, snapshots, { ...press, cacheId: first.cacheId }, at(2000)),
    ).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining(`listing ${first.cacheId} is no longer`),
    });
    expect(calls).toEqual([]);

    await pressByIndex(
      desktop,
      snapshots,
      { ...press, elementIndex: 0, cacheId: second.cacheId },
      at(2000),
    );
    expect(calls).toEqual(['focus Editor', 'press ctrl+k']);
  });

  it('when the named listing is current but expired, then 409', async () => {
    const snapshots = new SnapshotStore(5000);
    const { cacheId } = snapshots.save('chromium', page, 1000);
    const { desktop, calls } = fakeDesktop();
    await expect(
      pressByIndex(desktop, snapshots, { ...press, cacheId }, at(6000)),
    ).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/expired/) });
    expect(calls).toEqual([]);
  });

  it('when another app is listed later and no cache_id is sent, then indices refer to the newest listing', async () => {
    const snapshots = new SnapshotStore(30_000);
    snapshots.save('chromium', page, 1000);
    snapshots.save('gedit', [buildElement({ name: 'Editor' })], 1500);
    const { desktop, calls } = fakeDesktop();
    await pressByIndex(desktop, snapshots, { ...press, elementIndex: 0 }, at(2000));
    expect(calls[0]).toBe('focus Editor');
  });
});

describe('press by index against its deadline', () => {
  /** A clock the fake desktop moves on, as slow AT-SPI calls would. */
  function slowDesktop(slow: { describe?: number; focus?: number; fail?: 'describe' }) {
    let clock = 1000;
    const calls: string[] = [];
    const desktop: Desktop = {
      listElements: async () => page,
      describe: async (e) => {
        clock += slow.describe ?? 0;
        if (slow.fail === 'describe') throw new Error('GetExtents did not answer within 900 ms');
        return e;
      },
      focus: async (e) => {
        clock += slow.focus ?? 0;
        calls.push(`focus ${e.name}`);
      },
      pressKey: async (key) => {
        calls.push(`press ${key}`);
      },
      click: async () => undefined,
      typeText: async () => undefined,
      close: async () => undefined,
    };
    const snapshots = new SnapshotStore(30_000);
    snapshots.save('chromium', page, clock);
    return { desktop, snapshots, calls, now: { wall: () => clock, monotonic: () => clock } };
  }

  it('when describe is slow enough to pass the deadline, then nothing is focused or pressed (timeout)', async () => {
    const { desktop, snapshots, calls, now } = slowDesktop({ describe: 1500 });
    await expect(
      pressByIndex(desktop, snapshots, { ...press, deadline: 2000 }, now),
    ).rejects.toMatchObject({ code: 'timeout', message: expect.stringMatching(/not executed/) });
    expect(calls).toEqual([]);
  });

  it('when focus is slow enough to pass the deadline, then the key is not pressed (timeout)', async () => {
    const { desktop, snapshots, calls, now } = slowDesktop({ describe: 100, focus: 1000 });
    await expect(
      pressByIndex(desktop, snapshots, { ...press, deadline: 2000 }, now),
    ).rejects.toMatchObject({ code: 'timeout' });
    expect(calls).toEqual(['focus Last name']);
  });

  it('when a desktop call fails once the deadline passed, then it is the deadline refusal', async () => {
    const { desktop, snapshots, calls, now } = slowDesktop({ describe: 1500, fail: 'describe' });
    await expect(
      pressByIndex(desktop, snapshots, { ...press, deadline: 2000 }, now),
    ).rejects.toMatchObject({
      code: 'timeout',
      message: expect.stringMatching(/reading the element/),
    });
    expect(calls).toEqual([]);
  });

  it('when every step ends before the deadline, then the key is pressed', async () => {
    const { desktop, snapshots, calls, now } = slowDesktop({ describe: 400, focus: 400 });
    await pressByIndex(desktop, snapshots, { ...press, deadline: 2000 }, now);
    expect(calls).toEqual(['focus Last name', 'press k']);
  });

  it('when the desktop is asked, then it is given the deadline to bound its calls', async () => {
    const { desktop, snapshots } = slowDesktop({});
    const seen: unknown[] = [];
    const describe = desktop.describe.bind(desktop);
    desktop.describe = (e, options) => {
      seen.push(options);
      return describe(e, options);
    };
    desktop.focus = async (_e, options) => {
      seen.push(options);
    };
    desktop.pressKey = async (_key, _modifiers, options) => {
      seen.push(options);
    };
    await pressByIndex(desktop, snapshots, { ...press, deadline: 2000 }, at(1500));
    expect(seen).toEqual([{ deadline: 2000 }, { deadline: 2000 }, { deadline: 2000 }]);
  });
});

describe('listing', () => {
  it('when filters hide elements, then the others keep their full-list index', () => {
    const snapshot = new SnapshotStore(30_000).save('chromium', page, 0);
    const listing = toListing(snapshot, { interactable_only: true, with_text_only: true });
    expect(listing.elements.map((e) => [e.index, e.text])).toEqual([
      [1, 'First name'],
      [2, 'Last name'],
      [3, 'Submit'],
    ]);
    expect(
      toListing(snapshot, { interactable_only: true, include_sometimes_interactable: false })
        .elements,
    ).toHaveLength(3);
    expect(toListing(snapshot, { max_elements: 2 }).elements.map((e) => e.index)).toEqual([0, 1]);
    expect(listing.stats).toMatchObject({
      total: 4,
      definitely_interactable: 3,
      sometimes_interactable: 1,
      by_role: { entry: 2, 'push button': 1, 'document web': 1 },
    });
    expect(listing.cache_info).toMatchObject({
      cache_id: snapshot.cacheId,
      element_count: 4,
      ttl_seconds: 30,
      timestamp: '1970-01-01T00:00:00.000Z',
      expires_at: '1970-01-01T00:00:30.000Z',
    });
    expect(listing.elements[1]).toEqual({
      index: 2,
      role: 'entry',
      text: 'Last name',
      interactability: 'definite',
      position: { x: 10, y: 60 },
      size: { width: 200, height: 30 },
    });
  });
});

describe('click and type by index', () => {
  const listed = () => {
    const snapshots = new SnapshotStore(30_000);
    snapshots.save('chromium', page, 1000);
    return snapshots;
  };

  it('when the element is unchanged, then it is clicked, or the text typed into it', async () => {
    const { desktop, calls } = fakeDesktop();
    const snapshots = listed();
    expect(await clickByIndex(desktop, snapshots, { elementIndex: 3 }, at(2000))).toBe(
      "clicked element 3 (push button 'Submit')",
    );
    expect(
      await typeByIndex(desktop, snapshots, { elementIndex: 2, text: 'Zoë 😀' }, at(2000)),
    ).toBe("typed 5 characters into element 2 (entry 'Last name')");
    expect(calls).toEqual(['click Submit', 'type "Zoë 😀" into Last name']);
  });

  it('when the element is gone or changed, then 409 and nothing is clicked or typed', async () => {
    for (const now of [() => null, (e: UiElement) => ({ ...e, name: 'Surname' })]) {
      const { desktop, calls } = fakeDesktop(now);
      const snapshots = listed();
      await expect(
        clickByIndex(desktop, snapshots, { elementIndex: 2 }, at(2000)),
      ).rejects.toMatchObject({ code: 'conflict' });
      await expect(
        typeByIndex(desktop, snapshots, { elementIndex: 2, text: 'x' }, at(2000)),
      ).rejects.toMatchObject({ code: 'conflict' });
      expect(calls).toEqual([]);
    }
  });

  it('when the deadline passed before the action, then timeout and nothing is done; a failed action is operation_failed', async () => {
    const { desktop, calls } = fakeDesktop();
    const snapshots = listed();
    await expect(
      clickByIndex(desktop, snapshots, { elementIndex: 3, deadline: 1999 }, at(2000)),
    ).rejects.toMatchObject({ code: 'timeout' });
    await expect(
      typeByIndex(desktop, snapshots, { elementIndex: 2, text: 'x', deadline: 1999 }, at(2000)),
    ).rejects.toMatchObject({ code: 'timeout' });
    expect(calls).toEqual([]);

    desktop.typeText = () => Promise.reject(new Error('the X display closed the connection'));
    await expect(
      typeByIndex(desktop, snapshots, { elementIndex: 2, text: 'x' }, at(2000)),
    ).rejects.toMatchObject({
      code: 'operation_failed',
      message: 'typing failed: the X display closed the connection',
    });
  });
});
