import { toPressCommand } from './operator-commands';

describe('press commands', () => {
  it('when a cache_id is sent in either shape, then the command carries it', () => {
    expect(
      toPressCommand(
        { element_index: 2, key_combo: 'ctrl+a', cache_id: 'listing-1' },
        5000,
        'token-a',
      ),
    ).toEqual({
      action: 'press',
      timeout_ms: 5000,
      budget_ms: 3000,
      requested_by: 'token-a',
      element_index: 2,
      cache_id: 'listing-1',
      key: 'a',
      modifiers: ['ctrl'],
    });
    expect(
      toPressCommand({ element_index: 2, key: 'b', cache_id: 'listing-1' }, 5000, 'token-a'),
    ).toEqual(expect.objectContaining({ cache_id: 'listing-1', key: 'b', modifiers: [] }));
  });

  it('when no cache_id (or null) is sent, then the command has none: the newest listing applies', () => {
    expect(toPressCommand({ element_index: 2, key: 'b' }, 5000, 'token-a')).not.toHaveProperty(
      'cache_id',
    );
    expect(
      toPressCommand({ element_index: 2, key: 'b', cache_id: null }, 5000, 'token-a'),
    ).not.toHaveProperty('cache_id');
  });
});
