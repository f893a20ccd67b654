import { itemText, queryTerms, searchTerms, sizeLimits, textLength } from '@screenfleet/contracts';
import { BSON, type Filter, type Sort } from 'mongodb';
import type { ContentDocument, SearchQuery } from './content-store';

/**
 * What the mongo adapter keeps beside each item so search needs neither `$text` (FerretDB has
 * none) nor aggregation expressions (FerretDB v1 evaluates almost none: $size, $filter, $divide,
 * even a field path in $addFields, are refused or taken literally). Never returned to callers.
 */
export interface SearchFields {
  /** searchTerms(itemText): matched with $all, multikey-indexed. */
  search_terms: string[];
  /** textLength(itemText): min/max length, and the relevance order. */
  search_text_length: number;
}

/** An item as stored: with its search fields and the message that stored it (its counting). */
export type StoredItem = ContentDocument & SearchFields & { batch?: string };

/** The projection that gives back exactly the inserted document. */
export const withoutSearchFields = { search_terms: 0, search_text_length: 0, batch: 0 } as const;

// An upper bound of one string element of a BSON array beyond its UTF-8: type byte, decimal
// index key and its NUL (up to 8 digits), length prefix, NUL.
const TERM_OVERHEAD = 16;
// Field names and array headers of SearchFields, with room to spare.
const FIELDS_OVERHEAD = 1024;

export function searchFields(doc: ContentDocument): SearchFields {
  const text = itemText(doc);
  return {
    search_terms: termsThatFit(doc, searchTerms(text)),
    search_text_length: textLength(text),
  };
}

/**
 * The terms, cut so the stored document stays under MongoDB's 16 MiB: the gateway admits items
 * up to that size without counting terms, and many distinct short words cost up to ~8x their
 * text as a BSON array. Only then (hundreds of thousands of distinct words) are the last-seen
 * terms left out; such an item is still found by its first ones. The document is measured only
 * when the terms alone could be large, so ordinary items pay nothing for this.
 */
function termsThatFit(doc: ContentDocument, terms: string[]): string[] {
  let termBytes = 0;
  for (const term of terms) termBytes += TERM_OVERHEAD + Buffer.byteLength(term, 'utf8');
  if (termBytes < 1024 * 1024) return terms;
  let budget = sizeLimits.maxStoredDocumentBytes - BSON.calculateObjectSize(doc) - FIELDS_OVERHEAD;
  if (termBytes <= budget) return terms;
  let kept = 0;
  for (const term of terms) {
    budget -= TERM_OVERHEAD + Buffer.byteLength(term, 'utf8');
    if (budget < 0) break;
    kept += 1;
  }
  return terms.slice(0, kept);
}

/** The query's filters, the same for the page and for the total. */
export function searchFilter(query: SearchQuery): Filter<StoredItem> {
  const filter: Filter<StoredItem> = { content_type: { $in: query.contentTypes } };
  const terms = queryTerms(query);
  if (terms.length > 0) filter.search_terms = { $all: terms };
  if (query.from || query.to) {
    filter.timestamp = {
      ...(query.from ? { $gte: query.from } : {}),
      ...(query.to ? { $lte: query.to } : {}),
    };
  }
  if (query.devices) filter.device_name = { $in: query.devices };
  // A regex never matches null or a missing field: items without a name are left out.
  if (query.appName !== undefined) filter.app_name = containing(query.appName);
  if (query.windowName !== undefined) filter.window_name = containing(query.windowName);
  if (query.minLength !== undefined || query.maxLength !== undefined) {
    filter.search_text_length = {
      ...(query.minLength !== undefined ? { $gte: query.minLength } : {}),
      ...(query.maxLength !== undefined ? { $lte: query.maxLength } : {}),
    };
  }
  return filter;
}

/**
 * newest: timestamp, then _id, both descending (one index read backwards serves it).
 * relevance: shortest text first, then newest. Every item found holds every query word, and
 * FerretDB cannot compute a score per query (no $text, no aggregation expressions), so the
 * rank is what BM25 keeps once term frequencies are not stored: the query's words are a larger
 * share of a shorter text. The sqlite store ranks by BM25 itself; both put a short text with
 * the words above a long one. Without terms there is no text match to rank: newest.
 */
export function searchSort(query: SearchQuery): Sort {
  const newest = { timestamp: -1, _id: -1 } as const;
  if (query.order === 'relevance' && queryTerms(query).length > 0)
    return { search_text_length: 1, ...newest };
  return newest;
}

function containing(text: string): { $regex: string; $options: string } {
  return { $regex: text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), $options: 'i' };
}
