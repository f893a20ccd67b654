import { limits } from '../limits';
import { validators } from '../registry';

describe('click-by-index and type-by-index requests', () => {
  test("when screenpipe SDK's shapes and ours come, then they pass", () => {
    expect(validators.clickByIndexRequest.check({ element_index: 5 })).toEqual([]);
    expect(
      validators.clickByIndexRequest.check({
        element_index: 5,
        cache_id: 'abc-1',
        device_name: 'd',
      }),
    ).toEqual([]);
    expect(validators.typeByIndexRequest.check({ element_index: 3, text: 'hello world' })).toEqual(
      [],
    );
    expect(
      validators.typeByIndexRequest.check({
        element_index: 3,
        text: 'Zoë 😀\n\tß',
        cache_id: null,
      }),
    ).toEqual([]);
  });

  test('when the text is empty, too long or has a control character other than a line break or tab, then the field and rule are named', () => {
    const rules = (text: string) =>
      validators.typeByIndexRequest
        .check({ element_index: 0, text })
        .map((e) => `${e.path} ${e.rule}`);
    expect(rules('')).toEqual(['text minLength']);
    // Characters, not UTF-16 units: as many emoji as the limit, not half.
    expect(rules('😀'.repeat(limits.maxTypeTextLength))).toEqual([]);
    expect(rules('a'.repeat(limits.maxTypeTextLength + 1))).toEqual(['text maxLength']);
    for (const control of ['\u0000', '\u0007', '\r', '\u001b', '\u007f', '\u0085']) {
      expect(rules(`a${control}b`)).toEqual(['text pattern']);
    }
    expect(
      validators.typeByIndexRequest.check({ element_index: 0 }).map((e) => `${e.path} ${e.rule}`),
    ).toEqual(['text required']);
    // Unknown fields are dropped, as on every route: a click never carries text on.
    const click: Record<string, unknown> = { element_index: 0, text: 'x' };
    expect(validators.clickByIndexRequest.check(click)).toEqual([]);
    expect(click).toEqual({ element_index: 0 });
  });
});
