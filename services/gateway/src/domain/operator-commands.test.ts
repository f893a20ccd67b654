import { ListingDevices, toPressCommand } from './operator-commands';

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

describe('listing devices', () => {
  it('when a press names a cache_id, then it goes to the device that listing was made on', () => {
    const listings = new ListingDevices(10, () => 1000);
    listings.remember('token-a', 'c1', 'desk-1', 30_000);
    listings.remember('token-b', 'c2', 'desk-2', 30_000);
    expect(listings.deviceFor('token-a', 'c1')).toBe('desk-1');
    expect(listings.deviceFor('token-a', 'c2')).toBe('desk-2');
  });

  it("when a press names no cache_id, then it goes to its own token's newest listing, never another's", () => {
    const listings = new ListingDevices(10, () => 1000);
    listings.remember('token-a', 'c1', 'desk-1', 30_000);
    listings.remember('token-b', 'c2', 'desk-2', 30_000);
    expect(listings.deviceFor('token-a', undefined)).toBe('desk-1');
    expect(listings.deviceFor('token-c', undefined)).toBeUndefined();
  });

  it('when the listing expired or the map is full, then the device is unknown (resolved as before)', () => {
    let now = 0;
    const listings = new ListingDevices(2, () => now);
    listings.remember('t1', 'c1', 'desk-1', 100);
    now = 100;
    expect(listings.deviceFor('t1', 'c1')).toBeUndefined();
    listings.remember('t2', 'c2', 'desk-2', 100);
    listings.remember('t3', 'c3', 'desk-3', 100);
    expect(listings.deviceFor('t1', undefined)).toBeUndefined();
    expect(listings.deviceFor('t3', 'c3')).toBe('desk-3');
  });
});
