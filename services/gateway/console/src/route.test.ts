import { hashFor, parseHash } from './route';

describe('the console route', () => {
  it('when a hash names a view, a path and a query, then each is read back', () => {
    const route = parseHash('#/devices/MacBook%20Pro?q=report&offset=20');
    expect(route.view).toBe('devices');
    expect(route.path).toEqual(['MacBook Pro']);
    expect(Object.fromEntries(route.query)).toEqual({ q: 'report', offset: '20' });
  });

  it('when a route is written and parsed, then it is the same route', () => {
    const hash = hashFor('devices', ['desk/1 ü'], new URLSearchParams({ q: 'a+b c' }));
    const route = parseHash(hash);
    expect(route.path).toEqual(['desk/1 ü']);
    expect(route.query.get('q')).toBe('a+b c');
  });

  it('when the hash is empty or broken, then no view is named and nothing throws', () => {
    expect(parseHash('').view).toBe('');
    expect(parseHash('#/%E0%A4%A').view).toBe('%E0%A4%A');
  });
});
