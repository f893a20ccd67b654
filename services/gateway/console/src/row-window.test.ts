import { rowRange, rowStep, rowsToRender } from './row-window';

/** 1,000 rows of 36 px in an 800 px viewport: about 22 rows show at once. */
const geometry = { count: 1000, rowHeight: 36, viewport: 800 };

describe("a long list's window", () => {
  it('when the list starts on screen, then its first rows are rendered, the screenful and at least a step more', () => {
    const range = rowRange({ ...geometry, top: 200 });
    expect(range.start).toBe(0);
    // 600 px of the viewport show rows 0-16; a step beyond, rounded up to a step.
    expect(range.end).toBe(30);
    expect(range.end - Math.ceil(600 / 36)).toBeGreaterThanOrEqual(rowStep);
  });

  it('when scrolled into the middle, then the rows on screen and at least a step either side are rendered, in steps', () => {
    const top = -500 * 36 - 10; // row 500 is at the viewport's top, 10 px scrolled past
    const range = rowRange({ ...geometry, top });
    const firstShown = 500;
    const lastShown = Math.ceil((800 - top) / 36); // not included
    expect(range.start).toBeLessThanOrEqual(firstShown - rowStep);
    expect(range.end).toBeGreaterThanOrEqual(lastShown + rowStep);
    expect(range.start % rowStep).toBe(0);
    expect(range.end % rowStep).toBe(0);
    expect(range.end - range.start).toBeLessThanOrEqual(lastShown - firstShown + 3 * rowStep);
  });

  it('when scrolled a few pixels, then the range stays the same (no render per pixel)', () => {
    const at = (scrolled: number) => rowRange({ ...geometry, top: -500 * 36 - scrolled });
    expect(at(1)).toEqual(at(30));
  });

  it('when scrolled to the end, then the last row is rendered and none beyond it', () => {
    const top = 800 - 1000 * 36; // the last row's bottom at the viewport's bottom
    expect(rowRange({ ...geometry, top }).end).toBe(1000);
  });

  it('when the list is shorter than the screen or empty, then all of it (or nothing) is rendered', () => {
    expect(rowRange({ ...geometry, count: 5, top: 200 })).toEqual({ start: 0, end: 5 });
    expect(rowRange({ ...geometry, count: 0, top: 200 })).toEqual({ start: 0, end: 0 });
  });

  it('when the list is scrolled far past (a filter left fewer rows than the scroll position), then the range is empty, never inverted', () => {
    expect(rowRange({ ...geometry, count: 3, top: -5000 })).toEqual({ start: 3, end: 3 });
  });

  it('when the list starts more than a step below the screen, then no row is rendered until it is scrolled to', () => {
    expect(rowRange({ ...geometry, top: 800 + 2 * rowStep * 36 })).toEqual({ start: 0, end: 0 });
    expect(rowRange({ ...geometry, top: 800 }).end).toBe(rowStep);
  });

  it('when the row height is not known (0), then it still answers a bounded range', () => {
    const range = rowRange({ ...geometry, rowHeight: 0, top: 0 });
    expect(range.start).toBe(0);
    expect(range.end).toBeLessThanOrEqual(1000);
  });
});

describe('the rows rendered besides the window', () => {
  const window = { start: 40, end: 80 };

  it('when no row holds the focus, or the focused row is in the window, then the window alone', () => {
    expect(rowsToRender(window, -1, 1000)).toEqual([window]);
    expect(rowsToRender(window, 60, 1000)).toEqual([window]);
  });

  it('when the focused row was scrolled away, then it and a row either side are rendered too, in order', () => {
    expect(rowsToRender(window, 5, 1000)).toEqual([{ start: 4, end: 7 }, window]);
    expect(rowsToRender(window, 500, 1000)).toEqual([window, { start: 499, end: 502 }]);
  });

  it('when the focused row is next to the window, then one range holds both', () => {
    expect(rowsToRender(window, 80, 1000)).toEqual([{ start: 40, end: 82 }]);
    expect(rowsToRender(window, 38, 1000)).toEqual([{ start: 37, end: 80 }]);
  });

  it("when the focused row is the list's first or last, then its neighbours stop at the list's ends", () => {
    expect(rowsToRender(window, 0, 1000)).toEqual([{ start: 0, end: 2 }, window]);
    expect(rowsToRender(window, 999, 1000)).toEqual([window, { start: 998, end: 1000 }]);
  });

  it('when the window is empty, or the focused row is no longer listed (a filter), then what is left', () => {
    expect(rowsToRender({ start: 3, end: 3 }, 1, 3)).toEqual([{ start: 0, end: 3 }]);
    expect(rowsToRender(window, 1000, 1000)).toEqual([window]);
  });
});
