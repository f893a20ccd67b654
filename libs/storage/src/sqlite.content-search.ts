import { MAX_STORABLE_TIMESTAMP_MS, queryTerms } from '@screenfleet/contracts';
import type { SearchQuery } from './content-store';
import {
  deviceToken,
  OVERFLOW_SEQ,
  SLOTS_PER_MS,
  type ContentTables,
} from './sqlite.content-schema';

export interface Sql {
  text: string;
  params: Array<string | number>;
}

/** One seq range's part of a page: where its rows come from, their rank and order. */
interface RangePage {
  from: Sql;
  where: Sql;
  /** The rank column (relevance), or NULL. */
  rank: string;
  order: string;
}

/**
 * The one statement of a search, answering in one row: `total`, and `page`, the page's documents
 * as the text of a JSON array; one statement, so both read the same snapshot. Call it only when
 * the query can match something (contentTypes and devices, when given, not empty).
 *
 * Items live in two seq ranges (sqlite.content-schema.ts): the time-ordered one, where rowid
 * order is time order, and the overflow range of items past their millisecond's places, read by
 * their timestamp_ms. A page takes the first offset + limit of each range in the query's order
 * and merges them; a total adds both ranges' counts (an empty overflow range costs a seek).
 *
 * With words, the search index leads: it matches the words, the devices and the content types;
 * over the time-ordered range its rowid applies the time bounds and yields newest first, so a
 * page reads only the item rows it shows (plus those the name and length filters skip) and a
 * total without those filters is counted in the index alone. relevance: FTS5's rank (BM25 over
 * the words), then newest; it scores every match, so it costs more than newest.
 *
 * Without words, the item table is read by seq backwards for the page, through its timestamp
 * indexes for the total.
 */
export function searchSql(tables: ContentTables, query: SearchQuery, maxBytes?: number): Sql {
  const terms = queryTerms(query);
  const relevance = ranksEveryMatch(query);
  const { total, ranges } =
    terms.length > 0 ? withWords(tables, query, terms) : withoutWords(tables, query);
  const page =
    query.limit === 0
      ? { text: `'[]'`, params: [] }
      : pageOf(tables, ranges, query, relevance, maxBytes ?? Number.MAX_SAFE_INTEGER);
  return {
    text: `SELECT (${total.text}) AS total, (${page.text}) AS page`,
    params: [...total.params, ...page.params],
  };
}

/** A relevance search: it scores every match of its words, over the whole index. */
export function ranksEveryMatch(query: SearchQuery): boolean {
  return query.order === 'relevance' && queryTerms(query).length > 0;
}

function withWords(
  { search, table }: ContentTables,
  query: SearchQuery,
  terms: string[],
): { total: Sql; ranges: RangePage[] } {
  const named = nameAndLengthFilters(query);
  const relevance = query.order === 'relevance';
  const match: Sql = { text: `${search} MATCH ?`, params: [matchExpression(terms, query)] };
  const timed = and([match, ...seqBounds(`${search}.rowid`, query)]);
  const overflow = and([
    match,
    { text: `${search}.rowid >= ${OVERFLOW_SEQ}`, params: [] },
    ...timeBounds(query),
    ...named,
  ]);
  const joined = {
    text: `${search} CROSS JOIN ${table} AS item ON item.seq = ${search}.rowid`,
    params: [],
  };
  const rank = relevance ? `${search}.rank` : 'NULL';
  const byRank = relevance ? `${search}.rank, ` : '';
  // Without name or length filters the index alone picks the page's rows, and only those item
  // rows are read.
  const timedPage: RangePage =
    named.length === 0
      ? {
          from: {
            text: `(SELECT rowid AS seq, ${relevance ? 'rank' : 'NULL'} AS rank FROM ${search}
                    WHERE ${timed.text} ORDER BY ${relevance ? 'rank, ' : ''}rowid DESC LIMIT ?) AS hit
                   CROSS JOIN ${table} AS item ON item.seq = hit.seq`,
            params: [...timed.params, query.offset + query.limit],
          },
          where: { text: '1', params: [] },
          rank: 'hit.rank',
          order: relevance ? 'hit.rank, item.seq DESC' : 'item.seq DESC',
        }
      : {
          from: joined,
          where: and([timed, ...named]),
          rank,
          order: `${byRank}${search}.rowid DESC`,
        };
  return {
    total: sum([
      named.length === 0
        ? countOf({ text: search, params: [] }, timed)
        : countOf(joined, and([timed, ...named])),
      countOf(joined, overflow),
    ]),
    ranges: [
      timedPage,
      {
        from: joined,
        where: overflow,
        rank,
        order: `${byRank}item.timestamp_ms DESC, item.seq DESC`,
      },
    ],
  };
}

function withoutWords(
  { table, search }: ContentTables,
  query: SearchQuery,
): { total: Sql; ranges: RangePage[] } {
  const from = { text: `${table} AS item`, params: [] };
  const named = nameAndLengthFilters(query);
  const types = typeFilter(query);
  return {
    total:
      types.length > 0 && named.length === 0
        ? // The item table has no index on the type, and one would cost every insert: the
          // search index's type column counts it (the devices too), as a search with words.
          indexedTotal({ table, search }, query)
        : // The same bounds on timestamp_ms hold both ranges' items, so the total can use the
          // (timestamp_ms, id) or (device_name, timestamp_ms, id) index instead of the rows.
          countOf(
            from,
            and([
              ...timeBounds(query),
              ...types,
              ...deviceFilter('item.device_name', query),
              ...named,
            ]),
          ),
    ranges: [
      {
        from,
        // The device list unindexed here (unary +): reading backwards by seq finds a page
        // after a few rows, where the device index would fetch all the device's items in
        // range to sort them.
        where: and([
          ...seqBounds('item.seq', query),
          ...types,
          ...deviceFilter('+item.device_name', query),
          ...named,
        ]),
        rank: 'NULL',
        order: 'item.seq DESC',
      },
      {
        // By seq alone: its order (timestamp) would otherwise have SQLite walk a whole
        // timestamp index to find overflow rows, which are few or none.
        from: { text: `${table} AS item NOT INDEXED`, params: [] },
        where: and([
          { text: `item.seq >= ${OVERFLOW_SEQ}`, params: [] },
          ...timeBounds(query),
          ...types,
          ...deviceFilter('item.device_name', query),
          ...named,
        ]),
        rank: 'NULL',
        order: 'item.timestamp_ms DESC, item.seq DESC',
      },
    ],
  };
}

/** The total of a search with no words nor name or length filters, from the search index. */
function indexedTotal(
  { table, search }: Pick<ContentTables, 'table' | 'search'>,
  query: SearchQuery,
) {
  const match: Sql = { text: `${search} MATCH ?`, params: [matchExpression([], query)] };
  return sum([
    countOf({ text: search, params: [] }, and([match, ...seqBounds(`${search}.rowid`, query)])),
    countOf(
      { text: `${search} CROSS JOIN ${table} AS item ON item.seq = ${search}.rowid`, params: [] },
      and([
        match,
        { text: `${search}.rowid >= ${OVERFLOW_SEQ}`, params: [] },
        ...timeBounds(query),
      ]),
    ),
  ]);
}

/**
 * The page: each range's first offset + limit rows in the query's order, merged in that order,
 * the offset skipped, cut where its documents reach `maxBytes` (one at least), and those
 * documents concatenated into a JSON array in page order. The ranges yield positions and sizes
 * only (octet_length reads a row's header, not its text): the documents read are the page's.
 */
function pageOf(
  { table }: ContentTables,
  ranges: RangePage[],
  query: SearchQuery,
  relevance: boolean,
  maxBytes: number,
): Sql {
  const arms = ranges.map((range) => ({
    text: `SELECT * FROM (
             SELECT item.timestamp_ms AS t, item.seq AS s, ${range.rank} AS r,
                    octet_length(item.document) AS n
             FROM ${range.from.text} WHERE ${range.where.text} ORDER BY ${range.order} LIMIT ?)`,
    params: [...range.from.params, ...range.where.params, query.offset + query.limit],
  }));
  const order = relevance ? 'r, t DESC, s DESC' : 't DESC, s DESC';
  return {
    text: `SELECT '[' || coalesce(group_concat(item.document, ',' ORDER BY page.rn), '') || ']'
           FROM (
             SELECT s, rn FROM (
               SELECT s, n, row_number() OVER w AS rn, sum(n) OVER w AS bytes FROM (
                 SELECT * FROM (${arms.map((arm) => arm.text).join(' UNION ALL ')})
                 ORDER BY ${order} LIMIT ? OFFSET ?)
               WINDOW w AS (ORDER BY ${order} ROWS UNBOUNDED PRECEDING))
             WHERE bytes - n < ?) AS page
           CROSS JOIN ${table} AS item ON item.seq = page.s`,
    params: [...arms.flatMap((arm) => arm.params), query.limit, query.offset, maxBytes],
  };
}

/**
 * Each word a quoted FTS5 string (a word, never an operator), all required, in the words
 * column only; devices and types as their one-token columns, any of those given. Without words
 * (a total counted in the index), devices and types alone: then some type filter is given.
 */
function matchExpression(terms: string[], query: SearchQuery): string {
  const parts = terms.length > 0 ? [`words : (${terms.map(quoted).join(' AND ')})`] : [];
  if (query.devices)
    parts.push(`device : (${query.devices.map(deviceToken).map(quoted).join(' OR ')})`);
  if (!coversAllTypes(query.contentTypes)) {
    parts.push(`type : (${query.contentTypes.map(quoted).join(' OR ')})`);
  }
  return parts.join(' AND ');
}

function nameAndLengthFilters(query: SearchQuery): Sql[] {
  const filters: Sql[] = [];
  if (query.appName !== undefined) filters.push(containing('item.app_name_folded', query.appName));
  if (query.windowName !== undefined) {
    filters.push(containing('item.window_name_folded', query.windowName));
  }
  if (query.minLength !== undefined) {
    filters.push({ text: 'item.text_length >= ?', params: [query.minLength] });
  }
  if (query.maxLength !== undefined) {
    filters.push({ text: 'item.text_length <= ?', params: [query.maxLength] });
  }
  return filters;
}

function typeFilter(query: SearchQuery): Sql[] {
  return coversAllTypes(query.contentTypes)
    ? []
    : [inList('item.content_type', query.contentTypes)];
}

function deviceFilter(column: string, query: SearchQuery): Sql[] {
  return query.devices ? [inList(column, query.devices)] : [];
}

/** Every type asked for: no filter at all, so the total stays within an index. */
function coversAllTypes(types: SearchQuery['contentTypes']): boolean {
  // A Record over ContentType, so a new type fails to compile here until it is listed.
  const all: Record<SearchQuery['contentTypes'][number], true> = {
    frames: true,
    transcription: true,
  };
  return Object.keys(all).every((type) => types.includes(type as keyof typeof all));
}

/**
 * Inclusive time bounds as a range of time-ordered seqs: [from's first place, to's last place],
 * and below the overflow range always.
 */
function seqBounds(column: string, query: SearchQuery): Sql[] {
  const { from, to } = boundsMs(query);
  const bounds: Sql[] = [];
  if (from !== undefined) {
    bounds.push({ text: `${column} >= CAST(? AS INTEGER) * ${SLOTS_PER_MS}`, params: [from] });
  }
  bounds.push(
    to !== undefined
      ? { text: `${column} < (CAST(? AS INTEGER) + 1) * ${SLOTS_PER_MS}`, params: [to] }
      : { text: `${column} < ${OVERFLOW_SEQ}`, params: [] },
  );
  return bounds;
}

function timeBounds(query: SearchQuery): Sql[] {
  const { from, to } = boundsMs(query);
  const bounds: Sql[] = [];
  if (from !== undefined) bounds.push({ text: 'item.timestamp_ms >= ?', params: [from] });
  if (to !== undefined) bounds.push({ text: 'item.timestamp_ms <= ?', params: [to] });
  return bounds;
}

/**
 * The bounds in milliseconds, kept within what the store holds so seq arithmetic stays in
 * 64-bit integers. No item lies beyond (insertItems refuses it), so a bound out there is none.
 */
function boundsMs(query: SearchQuery): { from?: number; to?: number } {
  const max = MAX_STORABLE_TIMESTAMP_MS;
  const from = query.from?.getTime();
  const to = query.to?.getTime();
  return {
    ...(from !== undefined && from > -max ? { from: Math.min(from, max) } : {}),
    ...(to !== undefined && to < max ? { to: Math.max(to, -max) } : {}),
  };
}

function inList(column: string, values: string[]): Sql {
  return {
    text: `${column} IN (SELECT value FROM json_each(?))`,
    params: [JSON.stringify(values)],
  };
}

/** A substring, case-insensitive (the column holds the lower-cased name); NULL never matches. */
function containing(column: string, text: string): Sql {
  return { text: `instr(${column}, ?) > 0`, params: [text.toLowerCase()] };
}

function quoted(token: string): string {
  return `"${token.replace(/"/g, '""')}"`;
}

function and(parts: Sql[]): Sql {
  if (parts.length === 0) return { text: '1', params: [] };
  return {
    text: parts.map((part) => part.text).join(' AND '),
    params: parts.flatMap((part) => part.params),
  };
}

function sum(parts: Sql[]): Sql {
  return {
    text: parts.map((part) => `(${part.text})`).join(' + '),
    params: parts.flatMap((part) => part.params),
  };
}

function countOf(from: Sql, where: Sql): Sql {
  return {
    text: `SELECT count(*) FROM ${from.text} WHERE ${where.text}`,
    params: [...from.params, ...where.params],
  };
}
