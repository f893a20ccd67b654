import { scanJsonSizes } from './json-scan';

const max = { arrayItems: 3, objectKeys: 3 };
const scan = (json: string) => scanJsonSizes(Buffer.from(json), max);

describe('the byte scan before JSON.parse', () => {
  it('when content.data has 8 million zeros, then it stops at the first element too many and names content.data', () => {
    const body = Buffer.from(
      `{"device_name":"d","content":{"content_type":"frames","data":[${'0,'.repeat(8_000_000)}0]}}`,
    );
    expect(scanJsonSizes(body, { arrayItems: 1000, objectKeys: 1000 })).toEqual({
      path: 'content.data',
      rule: 'maxItems',
      detail: 'content.data must NOT have more than 1000 items',
    });
  });

  it.each([
    ['arrays at the bound', '{"a":[1,2,3],"b":[[],{},"x"]}'],
    ['strings holding brackets, commas and escaped quotes', '{"a":["[,,,]","\\"{,,}\\"",","]}'],
    ['empty containers', '[[],[],{}]'],
    ['a scalar', '"x"'],
  ])('when the body has %s, then it passes', (_, json) => {
    expect(scan(json)).toBeUndefined();
  });

  it.each([
    ['an array of numbers', '{"a":[1,2,3,4]}', 'a', 'maxItems'],
    ['an array of objects, nested', '{"a":[{"b":[1,2,3,4]}]}', 'a[0].b', 'maxItems'],
    ['an array of strings', '["a","b","c","d"]', '', 'maxItems'],
    ['an array of arrays', '{"x":1,"a\\"b":[[],[],[],[]]}', 'a"b', 'maxItems'],
    ['an object with too many keys', '{"k":{"a":1,"b":2,"c":3,"d":4}}', 'k', 'maxProperties'],
  ])('when the body has %s over the bound, then it names %s', (_, json, path, rule) => {
    expect(scan(json)).toEqual(expect.objectContaining({ path, rule }));
  });

  it('when the JSON is malformed, then it neither throws nor hangs', () => {
    expect(() => scan('{"a":[1,2,"unterminated')).not.toThrow();
    expect(() => scan(']]]}}},,,"')).not.toThrow();
  });
});
