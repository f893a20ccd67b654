import type { ContentType } from '@screenfleet/contracts';
import type { DeletedItems } from './content-store';

/** Deleted items as DeletedItems: counts by (device, type) and their distinct file paths. */
export function summariseDeleted(
  rows: ReadonlyArray<{ device_name: string; content_type: ContentType; file_path: string | null }>,
): DeletedItems {
  const counts = new Map<string, DeletedItems['counts'][number]>();
  const filePaths = new Set<string>();
  for (const row of rows) {
    const key = JSON.stringify([row.device_name, row.content_type]);
    const entry = counts.get(key) ?? {
      device_name: row.device_name,
      content_type: row.content_type,
      items: 0,
    };
    entry.items += 1;
    counts.set(key, entry);
    if (row.file_path !== null) filePaths.add(row.file_path);
  }
  return { counts: [...counts.values()], filePaths: [...filePaths] };
}
