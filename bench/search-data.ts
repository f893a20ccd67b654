/**
 * bench:search's content: screen-OCR-like items as the ingest worker stores them (toDocuments of
 * an AddRequest), deterministic for a seed. Each frame holds 50-100 words in 1-3 OCR blocks,
 * drawn from a Zipf-distributed vocabulary (s = 1: a few words in nearly every frame, a long
 * tail of rare ones, as UI chrome and document text give), on a handful of devices, apps and
 * windows, timestamps spread over the 7 days before `now`; one item in ten is a transcription.
 */
import type { AddRequest } from '@screenfleet/contracts';
import { toDocuments } from '@screenfleet/ingest-worker';
import type { ContentDocument } from '@screenfleet/storage';

export const VOCABULARY_SIZE = 3000;
const DAY_MS = 86_400_000;

// The head of the vocabulary: words screens show all the time (menus, UI, common English).
const commonWords = (
  'the to and of a in is for on file edit view new you it with that this at search settings ' +
  'help window open save from be are or by your not all home more close share run terminal ' +
  'inbox message reply send today yesterday meeting project report draft review update build ' +
  'error warning commit branch main test deploy customer invoice total account page tab menu ' +
  'user name date time status done next back cancel ok delete add select copy paste undo'
).split(' ');
const syllables = 'ka lo mi ren tu sa vel dor pri an ex on ti ma ster qua bel cor fin gra'.split(
  ' ',
);

/** The vocabulary in rank order (index 0 is the most frequent). */
export const vocabulary: string[] = (() => {
  const words = new Set(commonWords);
  for (let i = 0; words.size < VOCABULARY_SIZE; i++) {
    // Two to four syllables from i's digits in base 20: distinct, pronounceable, not English.
    let word = '';
    for (let n = i + 400; n > 0; n = Math.floor(n / syllables.length)) {
      word += syllables[n % syllables.length];
    }
    words.add(word);
  }
  return [...words];
})();

/** mulberry32: a small seeded PRNG, so every run stores the same content. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const cumulative = (() => {
  const weights = vocabulary.map((_, rank) => 1 / (rank + 1));
  const sums: number[] = [];
  let sum = 0;
  for (const weight of weights) sums.push((sum += weight));
  return sums.map((value) => value / sum);
})();

function zipfWord(next: () => number): string {
  const target = next();
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((cumulative[mid] ?? 1) < target) low = mid + 1;
    else high = mid;
  }
  return vocabulary[low] ?? 'the';
}

const devices = ['laptop-ana', 'desk-1', 'desk-2', 'studio-mac'];
const apps: Record<string, string[]> = {
  Chromium: ['Inbox - Mail', 'Quarterly report - Docs', 'Pull request #412 - GitHub', 'Search'],
  Code: ['main.ts - screenfleet', 'search.ts - screenfleet', 'README.md - notes'],
  Slack: ['general', 'deploys', 'design-review'],
  Terminal: ['bash', 'npm run test'],
  Figma: ['Dashboard v3'],
  Zoom: ['Weekly sync'],
};
const appNames = Object.keys(apps);

function pick<T>(next: () => number, values: readonly T[]): T {
  return values[Math.floor(next() * values.length)] as T;
}

function text(next: () => number, words: number): string {
  return Array.from({ length: words }, () => zipfWord(next)).join(' ');
}

/**
 * `count` documents, item `first` onward (the same index gives the same document), timestamps
 * in [now - 7 days, now]: drawn at random, or, with `ofTotal`, item i at its place among
 * `ofTotal` items spread evenly over the 7 days (a capture's stream arrives in time order).
 */
export function searchDocuments(
  first: number,
  count: number,
  now: number,
  ofTotal?: number,
): ContentDocument[] {
  const docs: ContentDocument[] = [];
  for (let i = first; i < first + count; i++) {
    const next = random(i + 1);
    const draw = next();
    const at = new Date(
      ofTotal === undefined
        ? now - Math.floor(draw * 7 * DAY_MS)
        : now - 7 * DAY_MS + Math.floor(((i + draw) * 7 * DAY_MS) / ofTotal),
    );
    const device = pick(next, devices);
    const words = 50 + Math.floor(next() * 51);
    let request: AddRequest;
    let receivedAt = new Date(now).toISOString();
    if (i % 10 === 9) {
      // A transcription is stored at its received_at (it carries no timestamp).
      receivedAt = at.toISOString();
      request = {
        device_name: device,
        content: {
          content_type: 'transcription',
          data: { transcription: text(next, words), transcription_engine: 'whisper-tiny' },
        },
      };
    } else {
      const app = pick(next, appNames);
      const blocks = 1 + Math.floor(next() * 3);
      const ocr = Array.from({ length: blocks }, (_, b) => ({
        text: text(next, Math.ceil(words / blocks)),
        confidence: 0.8 + next() * 0.2,
        focused: b === 0,
      }));
      request = {
        device_name: device,
        content: {
          content_type: 'frames',
          data: [
            {
              file_path: `/captures/${device}/${at.toISOString().slice(0, 13)}.mp4`,
              timestamp: at.toISOString(),
              app_name: app,
              window_name: pick(next, apps[app] ?? ['']),
              ocr_results: ocr,
              tags: [],
            },
          ],
        },
      };
    }
    docs.push(...toDocuments({ received_at: receivedAt, request }));
  }
  return docs;
}

/** Query words by how often they occur: vocabulary ranks around these. */
export const frequencyBands = { common: 9, medium: 200, rare: 2500 } as const;
export type Band = keyof typeof frequencyBands;

/** `n` distinct words of a band (ranks band, band+1, ...). */
export function bandWords(band: Band, n: number): string[] {
  const start = frequencyBands[band];
  return vocabulary.slice(start, start + n);
}
