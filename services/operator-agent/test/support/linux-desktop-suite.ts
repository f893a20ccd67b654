/**
 * What the desktop test files share: a real desktop (harness and Linux adapter) started before a
 * describe block's tests and stopped after them, and a listing of the test page read until the
 * page is exposed whole (Chromium exposes a page to AT-SPI a moment after showing it).
 */
import { waitFor } from '@screenfleet/runtime';
import { createLinuxDesktop, type Desktop, type UiElement } from '../../src/desktop';
import { freeDisplayNumber, startDesktopHarness, type DesktopHarness } from './desktop-harness';

/** Call inside a describe block; read the two inside its tests. */
export function useLinuxDesktop(displayFrom: number): {
  harness: () => DesktopHarness;
  desktop: () => Desktop;
} {
  let harness: DesktopHarness | undefined;
  let desktop: Desktop | undefined;
  beforeAll(async () => {
    harness = await startDesktopHarness(freeDisplayNumber(displayFrom));
    desktop = await createLinuxDesktop({ env: harness.env });
  }, 60_000);
  afterAll(async () => {
    await desktop?.close();
    await harness?.stop();
  }, 30_000);
  return { harness: () => harness as DesktopHarness, desktop: () => desktop as Desktop };
}

/** Chromium's elements, listed again until every DOM id of `ids` is among them. */
export function listedWith(desktop: Desktop, ids: readonly string[]): Promise<UiElement[]> {
  return waitFor(
    async () => {
      const elements = await desktop.listElements({ appName: 'chromium' }, { domIds: true });
      return ids.every((id) => elements.some((e) => e.domId === id)) && elements;
    },
    { timeoutMs: 15_000, intervalMs: 20, what: 'the form listed' },
  );
}
