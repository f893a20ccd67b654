import { stackedSegments, timelineBars } from './chart';

describe('timelineBars', () => {
  it('when values are drawn, then bars share the width, the largest fills the height, bottoms align', () => {
    const bars = timelineBars([0, 5, 10, 1], 40, 20, 2);
    expect(bars.map((b) => b.x)).toEqual([0, 10, 20, 30]);
    expect(bars.every((b) => b.width === 8)).toBe(true);
    expect(bars.map((b) => b.height)).toEqual([0, 10, 20, 2]);
    expect(bars.map((b) => b.y + b.height)).toEqual([20, 20, 20, 20]);
  });

  it('when a value is tiny against the largest, then its bar is still one unit high', () => {
    const [tiny] = timelineBars([1, 10_000], 10, 50);
    expect(tiny!.height).toBe(1);
  });

  it('when every value is zero or there are none, then nothing is drawn and nothing divides by zero', () => {
    expect(timelineBars([0, 0], 10, 10).map((b) => b.height)).toEqual([0, 0]);
    expect(timelineBars([], 10, 10)).toEqual([]);
  });
});

describe('stackedSegments', () => {
  it('when parts are stacked, then they lie end to end, scaled to the maximum, zeros left out', () => {
    const parts = [
      { key: 'ocr', value: 30 },
      { key: 'input', value: 0 },
      { key: 'audio', value: 10 },
    ];
    expect(stackedSegments(parts, 80, 100)).toEqual([
      { key: 'ocr', x: 0, width: 37.5 },
      { key: 'audio', x: 37.5, width: 12.5 },
    ]);
  });

  it('when the parts add up to more than the maximum, then they stop at the width', () => {
    const segments = stackedSegments(
      [
        { key: 'a', value: 8 },
        { key: 'b', value: 8 },
      ],
      10,
      100,
    );
    expect(segments.at(-1)!.x + segments.at(-1)!.width).toBe(100);
  });
});
