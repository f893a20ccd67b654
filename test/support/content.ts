/** Small factories for realistic capture content. */
const words = [
  'invoice',
  'meeting',
  'deploy',
  'function',
  'return',
  'customer',
  'total',
  'screen',
  'window',
  'build',
];

export function ocrText(seed: number, length = 300): string {
  let text = '';
  for (let i = 0; text.length < length; i++) text += `${words[(seed + i * 7) % words.length]} `;
  return text.slice(0, length);
}

/**
 * Items' times: six hours before this module loaded, on a whole minute, a second per seed. Recent,
 * so inside any archive retention (a fixed date aged into the pending counts a week later), and
 * the same for a seed throughout one test file.
 */
const FIRST_ITEM_MS = Math.floor((Date.now() - 6 * 3_600_000) / 60_000) * 60_000;

export function buildItem(seed: number, overrides: Record<string, unknown> = {}) {
  const at = new Date(FIRST_ITEM_MS + seed * 1000);
  return {
    file_path: `/captures/monitor_1/${at.toISOString()}.mp4`,
    timestamp: at.toISOString().replace('.000Z', 'Z'),
    app_name: 'Code',
    window_name: `file-${seed % 17}.ts - screenfleet`,
    ocr_results: [{ text: ocrText(seed), confidence: 0.91 }],
    tags: ['work'],
    ...overrides,
  };
}

export function buildBatch(device: string, first: number, count: number) {
  return {
    device_name: device,
    content: {
      content_type: 'frames',
      data: Array.from({ length: count }, (_, i) => buildItem(first + i)),
    },
  };
}
