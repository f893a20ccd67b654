import { ListingDevices } from './listing-devices';

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
