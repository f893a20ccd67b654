import {
  addRequestSchema,
  archiveConfigureRequestSchema,
  archiveInitRequestSchema,
  archiveRestoreRequestSchema,
  limits,
  listElementsRequestSchema,
  pressKeyRequestSchema,
} from './index';
import { scanJsonSizes } from './json-scan';

const requestSchemas = {
  addRequestSchema,
  pressKeyRequestSchema,
  listElementsRequestSchema,
  archiveConfigureRequestSchema,
  archiveInitRequestSchema,
  archiveRestoreRequestSchema,
};

const max = { arrayItems: 3, objectKeys: 3, depth: 4 };
const scan = (json: string) => scanJsonSizes(Buffer.from(json), max);

describe('the byte scan before JSON.parse', () => {
  it('when content.data has 8 million zeros, then it stops at the first element too many and names content.data', () => {
    const body = Buffer.from(
      `{"device_name":"d","content":{"content_type":"frames","data":[${'0,'.repeat(8_000_000)}0]}}`,
    );
    expect(scanJsonSizes(body, { arrayItems: 1000, objectKeys: 1000, depth: 1000 })).toEqual({
      path: 'content.data',
      rule: 'maxItems',
      detail: 'content.data must NOT have more than 1000 items',
    });
  });

  it.each([
    ['arrays at the bound', '{"a":[1,2,3],"b":[[],{},"x"]}'],
    ['strings holding brackets, commas and escaped quotes', '{"a":["[,,,]","\\"{,,}\\"",","]}'],
    ['empty containers', '[[],[],{}]'],
    ['containers nested 4 deep', '{"a":[{"b":[]}]}'],
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
    ['containers nested 5 deep', '{"a":[{"b":[[]]}]}', 'a[0].b[0]', 'maxDepth'],
  ])('when the body has %s over the bound, then it names %s', (_, json, path, rule) => {
    expect(scan(json)).toEqual(expect.objectContaining({ path, rule }));
  });

  it('when 7 million brackets nest, then it stops at the bound without a stack of millions', () => {
    const d = 7_000_000;
    const body = Buffer.from(`{"junk":${'['.repeat(d)}${']'.repeat(d)}}`);
    expect(scanJsonSizes(body, { arrayItems: 1000, objectKeys: 1000, depth: 1000 })).toEqual(
      expect.objectContaining({ rule: 'maxDepth' }),
    );
  });

  it('when the JSON is malformed, then it neither throws nor hangs', () => {
    expect(() => scan('{"a":[1,2,"unterminated')).not.toThrow();
    expect(() => scan(']]]}}},,,"')).not.toThrow();
  });
});

describe('the byte scan bound', () => {
  const largestMaxItems = (schema: unknown): number =>
    typeof schema !== 'object' || schema === null
      ? 0
      : Math.max(
          typeof (schema as { maxItems?: unknown }).maxItems === 'number'
            ? (schema as { maxItems: number }).maxItems
            : 0,
          ...Object.values(schema).map(largestMaxItems),
        );

  it.each(Object.entries(requestSchemas))('refuses nothing that %s allows', (_, schema) => {
    expect(largestMaxItems(schema)).toBeLessThanOrEqual(limits.maxArrayItemsAnywhere);
  });
});
