import {
  itemText,
  type SearchAnswer,
  type SearchAnswerItem,
  type SearchRequest,
} from '@screenfleet/contracts';
import type { ContentDocument, SearchResult } from '@screenfleet/storage';

const ELLIPSIS = '…';

/**
 * A store page in screenpipe's answer shape (libs/contracts searchAnswerSchema): every field
 * present, null where we record nothing; ids as strings; times in UTC with `Z`. Texts longer
 * than `max_content_length` are cut in the middle (truncateMiddle); then, if the answer would
 * not fit one reply message (`maxBytes`), the longest texts are cut further (fitToBytes). A
 * page the store ended early (its byte bound, limits.searchPageMaxBytes) says how many items it
 * holds in pagination.limit, so a client paging by offset += limit reads everything.
 */
export function toSearchAnswer(
  result: SearchResult,
  request: Pick<SearchRequest, 'limit' | 'offset' | 'max_content_length'>,
  maxBytes: number,
): SearchAnswer {
  const texts = result.items.map((doc) => {
    const text = itemText(doc);
    return request.max_content_length === undefined
      ? text
      : truncateMiddle(text, request.max_content_length);
  });
  const endedEarly =
    result.items.length > 0 &&
    result.items.length < request.limit &&
    request.offset + result.items.length < result.total;
  const limit = endedEarly ? result.items.length : request.limit;
  const build = (page: string[]): SearchAnswer => ({
    data: result.items.map((doc, i) => toAnswerItem(doc, page[i] ?? '')),
    pagination: { limit, offset: request.offset, total: result.total },
  });
  return fitToBytes(texts, build, maxBytes);
}

function toAnswerItem(doc: ContentDocument, text: string): SearchAnswerItem {
  const timestamp = doc.timestamp.toISOString();
  if (doc.content_type === 'transcription') {
    return {
      type: 'Audio',
      content: {
        chunk_id: doc._id,
        transcription: text,
        timestamp,
        file_path: doc.file_path,
        offset_index: null,
        tags: doc.tags,
        device_name: doc.device_name,
        device_type: null,
        speaker: null,
        start_time: null,
        end_time: null,
      },
    };
  }
  return {
    type: 'OCR',
    content: {
      frame_id: doc._id,
      text,
      timestamp,
      // Required for frames at /add; '' only for a document written by something else.
      file_path: doc.file_path ?? '',
      offset_index: null,
      app_name: doc.app_name,
      window_name: doc.window_name,
      tags: doc.tags,
      frame: null,
      frame_name: null,
      browser_url: null,
      focused: focusOf(doc),
      device_name: doc.device_name,
    },
  };
}

/** True when an OCR result was marked focused, false when every marked one was not, else null. */
function focusOf(doc: ContentDocument): boolean | null {
  const marks = doc.ocr_results.map((result) => result.focused).filter((f) => f !== null);
  if (marks.length === 0) return null;
  return marks.includes(true);
}

/**
 * `text` in at most `max` characters (code points): its first and last parts joined by `…`, the
 * first part the longer by one when they cannot be equal. Shorter texts are returned as they are.
 */
export function truncateMiddle(text: string, max: number): string {
  // A string of at most `max` UTF-16 units has at most `max` code points: no need to split it.
  if (text.length <= max) return text;
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  if (max <= 1) return max === 1 ? ELLIPSIS : '';
  const head = Math.ceil((max - 1) / 2);
  const tail = max - 1 - head;
  return chars.slice(0, head).join('') + ELLIPSIS + chars.slice(chars.length - tail).join('');
}

/** Attempts at cutting the texts before dropping results from the end of the page. */
const FIT_ATTEMPTS = 4;

/**
 * The answer built from `texts`, cut so that its JSON takes at most `maxBytes`: a reply larger
 * than a broker message is refused by RabbitMQ, which closes the worker's channel. The longest
 * texts are cut first, each to the same number of bytes (water filling), estimated from its
 * JSON size; if a few attempts do not fit (escapes the estimate missed), results are dropped
 * from the end of the page and pagination.limit says how many came. Realistic pages (KBs per
 * text) are far under the limit and returned as they are, measured once.
 */
export function fitToBytes(
  texts: string[],
  build: (texts: string[]) => SearchAnswer,
  maxBytes: number,
): SearchAnswer {
  let answer = build(texts);
  let size = jsonBytes(answer);
  if (size <= maxBytes) return answer;
  const textBytes = texts.map((text) => jsonBytes(text) - 2);
  const fixedBytes = size - textBytes.reduce((a, b) => a + b, 0);
  let budget = maxBytes - fixedBytes;
  for (let attempt = 0; attempt < FIT_ATTEMPTS && budget > 0; attempt += 1) {
    const cap = waterLevel(textBytes, budget);
    const cut = texts.map((text, i) => {
      const bytes = textBytes[i] ?? 0;
      if (bytes <= cap) return text;
      // Characters in proportion to the bytes kept, one less for the ellipsis (up to 3 bytes).
      const chars = Array.from(text).length;
      return truncateMiddle(text, Math.max(1, Math.floor(((cap - 3) * chars) / bytes)));
    });
    answer = build(cut);
    size = jsonBytes(answer);
    if (size <= maxBytes) return answer;
    budget -= size - maxBytes;
  }
  return dropFromEnd(answer, maxBytes);
}

/** The largest per-text byte count c with sum(min(bytes_i, c)) <= budget. */
function waterLevel(bytes: number[], budget: number): number {
  const sorted = [...bytes].sort((a, b) => a - b);
  let left = budget;
  for (let i = 0; i < sorted.length; i += 1) {
    const share = Math.floor(left / (sorted.length - i));
    const next = sorted[i] ?? 0;
    if (next > share) return share;
    left -= next;
  }
  return Number.POSITIVE_INFINITY;
}

function dropFromEnd(answer: SearchAnswer, maxBytes: number): SearchAnswer {
  const frame = jsonBytes({ ...answer, data: [] });
  let size = frame;
  let count = 0;
  for (const item of answer.data) {
    const itemBytes = jsonBytes(item) + 1;
    if (size + itemBytes > maxBytes) break;
    size += itemBytes;
    count += 1;
  }
  const data = answer.data.slice(0, count);
  return { data, pagination: { ...answer.pagination, limit: Math.max(1, count) } };
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');
