import type { SearchQuery } from './content-store';
import { queryTerms } from './content-text';
import { deviceToken, MAX_ABS_MS, SLOTS_PER_MS, type ContentTables } from './sqlite.content-schema';

export interface Sql {
  text: string;
  params: Array<string | number>;
}

/**
 * The SQL of one search: its page (absent when the limit is 0) and its total. Call it only when
 * the query can match something (contentTypes and devices, when given, not empty).
 *
 * With words, the search index comes first (CROSS JOIN keeps it the outer loop). It matches the
 * words, the devices and the content types; since its rowid is the item's seq (time-ordered,
 * sqlite.content-schema.ts) it also applies the time bounds and yields newest first. So a page
 * reads only the item rows it shows (plus those the name and length filters skip), and a total
 * without name or length filters is counted in the index alone. relevance: FTS5's rank (BM25
 * over the words), then newest; it scores every match, so it costs more than newest.
 *
 * Without words, the item table is read by seq backwards for the page, through its indexes for
 * the total where a filter allows.
 */
export function searchSql(tables: ContentTables, query: SearchQuery): { page?: Sql; count: Sql } {
  const terms = queryTerms(query);
  const named = nameAndLengthFilters(query);
  const page = (from: string, where: Sql, order: string): { page?: Sql } =>
    query.limit === 0
      ? {}
      : {
          page: {
            text: `SELECT item.document FROM ${from} WHERE ${where.text} ORDER BY ${order} LIMIT ? OFFSET ?`,
            params: [...where.params, query.limit, query.offset],
          },
        };

  if (terms.length > 0) {
    const { search, table } = tables;
    const joined = `${search} CROSS JOIN ${table} AS item ON item.seq = ${search}.rowid`;
    const indexed = and([
      { text: `${search} MATCH ?`, params: [matchExpression(terms, query)] },
      ...seqBounds(`${search}.rowid`, query),
    ]);
    const where = and([indexed, ...named]);
    const newest = `${search}.rowid DESC`;
    return {
      ...page(joined, where, query.order === 'relevance' ? `${search}.rank, ${newest}` : newest),
      count: named.length === 0 ? countOf(search, indexed) : countOf(joined, where),
    };
  }

  const from = `${tables.table} AS item`;
  const types = typeFilter(query);
  return {
    // The device list unindexed here (unary +): reading backwards by seq finds a page after a
    // few rows, where the device index would fetch all the device's items in range to sort them.
    ...page(
      from,
      and([
        ...seqBounds('item.seq', query),
        ...types,
        ...deviceFilter('+item.device_name', query),
        ...named,
      ]),
      'item.seq DESC',
    ),
    // The same bounds on timestamp_ms (equivalent, by seq's CHECK), so the total can use the
    // (timestamp_ms, id) or (device_name, timestamp_ms, id) index instead of the rows.
    count: countOf(
      from,
      and([...timeBounds(query), ...types, ...deviceFilter('item.device_name', query), ...named]),
    ),
  };
}

/**
 * Each word a quoted FTS5 string (a word, never an operator), all required, in the words
 * column only; devices and types as their one-token columns, any of those given.
 */
function matchExpression(terms: string[], query: SearchQuery): string {
  const parts = [`words : (${terms.map(quoted).join(' AND ')})`];
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

/** Inclusive time bounds as a seq range: [from's first place, to's last place]. */
function seqBounds(column: string, query: SearchQuery): Sql[] {
  const { from, to } = boundsMs(query);
  const bounds: Sql[] = [];
  if (from !== undefined) {
    bounds.push({ text: `${column} >= CAST(? AS INTEGER) * ${SLOTS_PER_MS}`, params: [from] });
  }
  if (to !== undefined) {
    bounds.push({ text: `${column} < (CAST(? AS INTEGER) + 1) * ${SLOTS_PER_MS}`, params: [to] });
  }
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
 * The bounds in milliseconds, kept within ±MAX_ABS_MS so seq arithmetic stays in 64-bit
 * integers. No item lies beyond (insertItems refuses it), so a bound out there is no bound.
 */
function boundsMs(query: SearchQuery): { from?: number; to?: number } {
  const from = query.from?.getTime();
  const to = query.to?.getTime();
  return {
    ...(from !== undefined && from > -MAX_ABS_MS ? { from: Math.min(from, MAX_ABS_MS) } : {}),
    ...(to !== undefined && to < MAX_ABS_MS ? { to: Math.max(to, -MAX_ABS_MS) } : {}),
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

function countOf(from: string, where: Sql): Sql {
  return { text: `SELECT count(*) AS n FROM ${from} WHERE ${where.text}`, params: where.params };
}
