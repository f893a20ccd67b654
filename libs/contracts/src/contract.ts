import type { Scope } from './scopes';
import type { Validator } from './validate';

/**
 * What one contract module hands the registries (registry.ts): its compiled validators, the
 * schemas the OpenAPI document names as components, and the routes it describes. A module
 * describes a message or a route once (schema, inferred type, validator, OpenAPI description);
 * nothing else lists them again.
 */
export interface Contract {
  validators: Readonly<Record<string, Validator<unknown>>>;
  /** Component name -> the schema as exported; wherever it is embedded the document says `$ref`. */
  components: Readonly<Record<string, object>>;
  operations: readonly ApiOperation[];
}

export type Json =
  null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** The scopes routes ask (`metrics` is the ops port's). */
export type ApiScope = Exclude<Scope, 'metrics'>;
export type ErrorStatus =
  400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 429 | 500 | 502 | 503 | 504;

export interface Example {
  summary: string;
  value: Json;
}

/** A query parameter, as OpenAPI writes it. */
export interface QueryParameter {
  name: string;
  description: string;
  schema: JsonObject;
  example?: Json;
}

/** One route as the gateway serves it: what no schema can say. */
export interface ApiOperation {
  method: 'get' | 'post' | 'delete';
  path: string;
  operationId: string;
  tag: 'ingest' | 'search' | 'fleet' | 'operator' | 'archive' | 'data' | 'auth' | 'meta';
  summary: string;
  description: string;
  /** Null: served without a token. `any`: any valid token (or the tokenless loopback grant). */
  scope: ApiScope | 'any' | null;
  /** `schema`: a component's schema object (the document refers to it by its name). */
  request?: { schema: object; required: boolean; examples: Record<string, Example> };
  /** Query parameters (GET routes). */
  parameters?: readonly QueryParameter[];
  /** Path parameters, one per `{name}` in `path`. */
  pathParameters?: readonly QueryParameter[];
  /** `status`: the success status, 200 unless said (201 for what a POST creates). */
  response: { schema: object | null; description: string; example?: Json; status?: 200 | 201 };
  errors: readonly ErrorStatus[];
}

/**
 * The statuses most routes share (openapi/error-responses.ts says what each means): every route
 * that checks a token also counts it against the gateway's rate limits (429).
 */
export const authErrors = [401, 403, 405, 429, 500] as const;
export const bodyErrors = [400, 413, 415] as const;
/** The routes the archive worker answers (archive, data deletes): it may be down or answer nonsense. */
export const archiveErrors = [...authErrors, 502, 503] as const;
