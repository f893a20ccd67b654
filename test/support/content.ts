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

export function buildItem(seed: number, overrides: Record<string, unknown> = {}) {
  const at = new Date(Date.UTC(2026, 10, 22, 10, 0, 0) + seed * 1000);
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
