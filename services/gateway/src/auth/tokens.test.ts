import { limits } from '@screenfleet/contracts';
import { createTokenRegistry, parseTokens } from './tokens';

const entry = (fields: Record<string, unknown>) =>
  JSON.stringify([{ id: 'ci', token: 'a-token-of-16-chars', scopes: ['ingest'], ...fields }]);

describe('parseTokens', () => {
  it('when an entry is valid, then its id, token, scopes and devices are read', () => {
    expect(parseTokens(entry({ devices: ['desk-1'] }))).toEqual([
      { id: 'ci', token: 'a-token-of-16-chars', scopes: ['ingest'], devices: ['desk-1'] },
    ]);
  });

  it.each([
    ['an empty id', { id: '' }, /\[0\]\.id must be a string of 1 to 200 characters/],
    // Operator commands carry the id as requested_by: a longer one would fail every press.
    [
      'an id longer than a command carries',
      { id: 'x'.repeat(limits.maxTokenIdLength + 1) },
      /\[0\]\.id must be a string of 1 to 200 characters/,
    ],
    ['a short token', { token: 'short' }, /\.token must be a string of at least 16/],
    ['an unknown scope', { scopes: ['root'] }, /\.scopes must be a list of: ingest/],
    ['devices that are not names', { devices: [1] }, /\.devices must be a list/],
  ])('when an entry has %s, then start-up fails naming the field', (_case, fields, message) => {
    expect(() => parseTokens(entry(fields))).toThrow(message);
  });

  it('when an id is exactly as long as a command carries, then it is accepted', () => {
    const id = 'x'.repeat(limits.maxTokenIdLength);
    expect(parseTokens(entry({ id }))[0]?.id).toBe(id);
  });
});

describe('createTokenRegistry', () => {
  it('when a token is looked up, then its grant is found, and nothing for a token one character off', () => {
    const registry = createTokenRegistry(parseTokens(entry({})));
    expect(registry.find('a-token-of-16-chars')).toEqual({ id: 'ci', scopes: ['ingest'] });
    expect(registry.find('a-token-of-16-charz')).toBeUndefined();
  });
});
