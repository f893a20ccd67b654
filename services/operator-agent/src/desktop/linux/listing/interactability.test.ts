import { interactabilityOf } from './interactability';

describe('interactability', () => {
  test('when a role takes input, then it is definite; other focusables are sometimes', () => {
    expect(interactabilityOf('push button', true)).toBe('definite');
    expect(interactabilityOf('document web', true)).toBe('sometimes');
    expect(interactabilityOf('entry', false)).toBe('none');
  });
});
