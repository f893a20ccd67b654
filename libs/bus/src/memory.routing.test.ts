import { topicMatches } from './memory.routing';

describe('topic binding patterns', () => {
  it.each([
    ['content.#', 'content.frames', true],
    ['content.#', 'content', true],
    ['content.#', 'content.frames.ocr', true],
    ['content.#', 'contents.frames', false],
    ['content.*', 'content.frames', true],
    ['content.*', 'content', false],
    ['content.*', 'content.frames.ocr', false],
    ['*.frames', 'content.frames', true],
    ['#.ocr', 'content.frames.ocr', true],
    ['#.ocr', 'ocr', true],
    ['a.#.z', 'a.z', true],
    ['a.#.z', 'a.b.c.z', true],
    ['a.#.z', 'a.b.c', false],
    ['#', 'anything.at.all', true],
    ['#', '', true],
    ['content.frames', 'content.frames', true],
    ['content.frames', 'content.audio', false],
  ])('when the binding is %p and the key %p, then it matches: %p', (pattern, key, expected) => {
    expect(topicMatches(pattern, key)).toBe(expected);
  });
});
