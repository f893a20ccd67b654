import { isUtf8 } from 'node:buffer';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { limits, scanJsonSizes, type FieldError } from '@screenfleet/contracts';
import { HttpError } from './http-error';

/**
 * JSON bodies only: no text/plain or form posts, so a web page cannot forge a request with a
 * "simple" cross-site POST. Invalid UTF-8 is refused rather than silently replaced.
 */
export function jsonBody(limitBytes: number): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    assertJsonContentType(req);
    next();
  };
  return [requireJson, jsonParser(limitBytes)];
}

/**
 * The same checks as one step a handler awaits once it has authenticated the request (the
 * operator routes). body-parser comes only as middleware: this is the one place it runs as a
 * promise, settled by its next().
 */
export function jsonBodyReader(limitBytes: number): (req: Request, res: Response) => Promise<void> {
  const parse = jsonParser(limitBytes);
  return (req, res) => {
    assertJsonContentType(req);
    return new Promise((resolve, reject) => {
      // body-parser's failures are Errors (http-errors) carrying the `type` toBodyError reads.
      void parse(req, res, (error?: unknown) =>
        error === undefined ? resolve() : reject(asError(error)),
      );
    });
  };
}

const asError = (error: unknown): Error =>
  error instanceof Error ? error : new Error(String(error));

function assertJsonContentType(req: Request): void {
  const contentType = req.get('content-type');
  if (!req.is('application/json')) {
    throw new HttpError(415, 'unsupported_media_type', 'Content-Type must be application/json', [
      { path: '', rule: 'content-type', detail: `got ${contentType ?? 'none'}` },
    ]);
  }
  // Before a byte is read: body-parser would decode utf-7 or utf-16 after the pre-parse size
  // scan, which reads raw bytes as UTF-8 (in UTF-7 "[" is "+AFs-", so a 5-million-element array
  // passes it). JSON between systems is UTF-8 (RFC 8259), so nothing else is read.
  const charset = charsetOf(contentType ?? '');
  if (charset !== undefined && charset !== 'utf-8') {
    throw new HttpError(
      415,
      'unsupported_encoding',
      'JSON bodies must be UTF-8: charset must be utf-8 or absent',
      [{ path: '', rule: 'charset', detail: `got ${contentType}` }],
    );
  }
}

/** The charset parameter of a Content-Type, lower case, quotes removed; undefined when absent. */
function charsetOf(contentType: string): string | undefined {
  for (const parameter of contentType.split(';').slice(1)) {
    const [name, ...value] = parameter.split('=');
    if (name?.trim().toLowerCase() !== 'charset') continue;
    return value
      .join('=')
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
  }
  return undefined;
}

function jsonParser(limitBytes: number): RequestHandler {
  return express.json({
    limit: limitBytes,
    // Any JSON value parses; the schema then says what the body must be ("body must be object").
    strict: false,
    type: 'application/json',
    verify: (_req, _res, buffer) => {
      // body-parser rewraps errors thrown here (status 403); its `type` survives, so use that.
      if (!isUtf8(buffer))
        throw Object.assign(new Error('invalid UTF-8'), { type: 'body.invalid_utf8' });
      // Before JSON.parse, which takes seconds over millions of elements or nesting levels: no
      // container may hold more than any schema allows (8 million zeros in content.data: 400
      // maxItems) nor nest deeper than maxJsonDepth.
      const oversized = scanJsonSizes(buffer, {
        arrayItems: limits.maxArrayItemsAnywhere,
        objectKeys: limits.maxObjectKeysAnywhere,
        depth: limits.maxJsonDepth,
      });
      if (oversized)
        throw Object.assign(new Error(oversized.detail), {
          type: 'body.too_many_entries',
          fieldError: oversized,
        });
    },
  });
}

interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
  fieldError?: FieldError;
}

const bodyErrors: Record<string, (error: BodyParserError) => HttpError> = {
  'entity.too.large': (error) =>
    new HttpError(413, 'too_large', `the body is larger than ${error.limit ?? '?'} bytes`),
  'entity.parse.failed': () => new HttpError(400, 'invalid_json', 'the body is not valid JSON'),
  'charset.unsupported': () =>
    new HttpError(415, 'unsupported_encoding', 'the body must be UTF-8 JSON'),
  'encoding.unsupported': () =>
    new HttpError(
      415,
      'unsupported_encoding',
      'Content-Encoding must be gzip, deflate, br or none',
    ),
  'body.invalid_utf8': () => new HttpError(400, 'invalid_utf8', 'the body is not valid UTF-8'),
  'body.too_many_entries': (error) =>
    new HttpError(
      400,
      'validation_failed',
      `invalid body: ${error.fieldError?.detail ?? 'too many entries'}`,
      error.fieldError ? [error.fieldError] : [],
    ),
  'request.aborted': () => new HttpError(400, 'aborted', 'the request was aborted'),
};

/** Translates body-parser's errors into our HTTP errors (413, 400, 415). */
export function toBodyError(error: unknown): HttpError | undefined {
  if (error instanceof HttpError) return error;
  const parsed = error as BodyParserError;
  const known = parsed.type ? bodyErrors[parsed.type] : undefined;
  if (known) return known(parsed);
  // Other client-side body failures (e.g. a corrupt gzip/deflate/br stream) carry a 4xx.
  return typeof parsed.status === 'number' && parsed.status >= 400 && parsed.status < 500
    ? new HttpError(400, 'invalid_body', 'the body could not be read (corrupt compression?)')
    : undefined;
}
