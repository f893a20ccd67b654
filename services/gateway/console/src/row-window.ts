/**
 * A long list's window: which of its rows to put in the DOM, from where the list is on the
 * screen. The rows all have one height, so the rows left out are stood for by padding of their
 * height (the scrollbar stays that of the whole list) and any row's place is a product.
 */

/** Rows `start` (included) to `end` (not included). */
export interface RowRange {
  start: number;
  end: number;
}

export interface RowGeometry {
  /** Rows in the list. */
  count: number;
  /** One row's height, in CSS pixels. */
  rowHeight: number;
  /** Where the list's first row starts, from the viewport's top (negative once scrolled past). */
  top: number;
  /** The viewport's height. */
  viewport: number;
}

/**
 * Rows kept beyond each edge of the viewport, at least: Tab to the next row and a wheel's turn
 * find it rendered (the browser scrolls a focused row into view, and the window follows). The
 * window moves in steps of as many rows, so a scroll re-renders every `step` rows, not every
 * row.
 */
export const rowStep = 10;

export function rowRange(
  { count, rowHeight, top, viewport }: RowGeometry,
  step = rowStep,
): RowRange {
  const height = Math.max(1, rowHeight);
  const first = Math.floor(-top / height);
  const last = Math.ceil((viewport - top) / height);
  const clamp = (row: number) => Math.min(count, Math.max(0, row));
  const start = clamp(Math.floor((first - step) / step) * step);
  const end = clamp(Math.ceil((last + step) / step) * step);
  return { start, end: Math.max(start, end) };
}

export const sameRange = (a: RowRange, b: RowRange) => a.start === b.start && a.end === b.end;

/**
 * The rows to render: the window, and the row that holds the focus (`focused`, -1 for none)
 * with a row either side, wherever the page has scrolled to. A focused element that left the
 * DOM would drop the focus to the page; its neighbours are there so that Tab and Shift+Tab from
 * it go to the next row, not to the window's first. One range when they meet, else two, in
 * order.
 */
export function rowsToRender(window: RowRange, focused: number, count: number): RowRange[] {
  if (focused < 0 || focused >= count) return [window];
  const kept = { start: Math.max(0, focused - 1), end: Math.min(count, focused + 2) };
  if (window.start === window.end) return [kept];
  const [first, second] = kept.start < window.start ? [kept, window] : [window, kept];
  if (second.start <= first.end) {
    return [{ start: first.start, end: Math.max(first.end, second.end) }];
  }
  return [first, second];
}
