import type { AddRequest, ArchiveStatus, ContentItem, PressKeyRequest } from './index';

// Compile-time checks that the inferred types say what the schemas say (npm run typecheck
// fails if they drift); the runtime assertion keeps jest honest about the file running.
describe('types inferred from the schemas', () => {
  it('when a body is typed, then required and nullable fields are as the schema says', () => {
    const item: ContentItem = { file_path: 'a', timestamp: null, tags: null };
    const request: AddRequest = {
      device_name: 'd',
      content: { content_type: 'frames', data: [item] },
    };
    const press: PressKeyRequest = { element_index: 1, key: 'a', modifiers: ['ctrl'] };
    // @ts-expect-error file_path is required
    const missing: ContentItem = { timestamp: null };
    // @ts-expect-error every counter is a number, never null
    const status: Pick<ArchiveStatus, 'pending_count'> = { pending_count: null };

    expect([request.content.content_type, press.element_index, missing, status]).toHaveLength(4);
  });
});
