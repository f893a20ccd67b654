import { StoreUnavailableError } from '@screenfleet/contracts';
import type { WriteName } from './sqlite-writer.operations';
import {
  classifySqliteError,
  ContentRejectedError,
  type StoreErrorKind,
} from './store-error-kinds';

/** How the main thread and the writer thread talk, over one MessagePort each way. */

export interface WriterLimits {
  /** A group's transaction takes no more writes once it holds this many items... */
  maxItems: number;
  /** ...or this many bytes of documents (a single larger write still goes, alone). */
  maxBytes: number;
}

/** What the thread is started with (workerData). */
export interface WriterThreadData {
  file: string;
  busyTimeoutMs: number;
  limits: WriterLimits;
}

/** To the thread: a write to run, or "finish what is queued, then close". */
export type ToWriter = WriteRequest | { type: 'close' };

export interface WriteRequest {
  type: 'write';
  id: number;
  name: WriteName;
  args: unknown;
  /** Items this write adds to its group (an insert's documents; 1 for the rest). */
  items: number;
}

/** From the thread: ready (or not), and the answers of each committed (or failed) group. */
export type FromWriter =
  | { type: 'ready' }
  | { type: 'open-failed'; error: EncodedError }
  | { type: 'group'; replies: WriteReply[]; committed: boolean };

export type WriteReply =
  { id: number; ok: true; value: unknown } | { id: number; ok: false; error: EncodedError };

/** An error as it crosses the thread boundary (a structured clone keeps neither class nor code). */
export interface EncodedError {
  kind: StoreErrorKind;
  name: string;
  message: string;
  /** SQLite's result code (SQLITE_BUSY, SQLITE_FULL...) when there is one. */
  code?: string;
}

export function encodeError(error: unknown): EncodedError {
  const err = error instanceof Error ? error : new Error(String(error));
  const code =
    'code' in err && typeof err.code === 'string' && err.code.startsWith('SQLITE_')
      ? err.code
      : undefined;
  return {
    kind: classifySqliteError(err),
    name: err.name,
    message: err.message,
    ...(code ? { code } : {}),
  };
}

/**
 * The error again, of a class the adapters' toStoreError maps as it would the original: a SQLite
 * error keeps its code, the port's own errors their class.
 */
export function decodeError({ kind, name, message, code }: EncodedError): Error {
  if (code) return Object.assign(new Error(message), { name, code });
  if (kind === 'rejected') return new ContentRejectedError(message);
  if (kind === 'unavailable') return new StoreUnavailableError(message);
  return Object.assign(new Error(message), { name });
}
