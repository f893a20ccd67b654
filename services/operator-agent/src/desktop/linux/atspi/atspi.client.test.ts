import { decodeRef, encodeRef } from './atspi.client';

describe('refs', () => {
  test('when a ref is encoded, then it decodes to the same bus and path', () => {
    const ref = { bus: ':1.42', path: '/org/a11y/atspi/accessible/7' };
    expect(decodeRef(encodeRef(ref))).toEqual(ref);
  });
});
