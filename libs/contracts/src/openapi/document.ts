import type { ApiOperation, ApiScope, Json, JsonObject } from '../contract';
import { errorBodySchema } from '../http/common.contract';
import { apiOperations, componentSchemas } from '../registry';
import { errorResponses } from './error-responses';
import { toJsonSchema2020 } from './json-schema-2020';

/**
 * The HTTP API as an OpenAPI 3.1 document, generated from the contract modules (registry.ts):
 * each module's components become components, with `$ref` wherever one embeds another (the very
 * same object, as archiveActionResultSchema embeds archiveStatusSchema), and each module's
 * routes become paths. Nothing here re-declares a body or a route; only the document's frame
 * (info, tags, the bearer scheme) and how a scope reads are written here.
 */

const scopeText: Record<ApiScope | 'any', string> = {
  any: 'Any valid token; tokenless from loopback when GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK=true.',
  ingest:
    'Scope `ingest`; tokenless from loopback when GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK=true.',
  operator: 'Scope `operator`; always needs a token.',
  'archive:read':
    'Scope `archive:read`; tokenless from loopback when GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK=true.',
  'archive:write':
    'Scope `archive:write`; tokenless from loopback when GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK=true.',
  search:
    'Scope `search`; tokenless from loopback when GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK=true.',
  'data:delete':
    'Scope `data:delete`; always needs a token (never granted by the tokenless loopback switch).',
  'tokens:admin': 'Scope `tokens:admin`; always needs a token.',
  'audit:read': 'Scope `audit:read`; always needs a token.',
};

/** Component schema -> its `$ref`: the document names a schema, never repeats it. */
const componentRefs = new Map<object, string>(
  Object.entries(componentSchemas).map(([name, schema]) => [
    schema,
    `#/components/schemas/${name}`,
  ]),
);

function schemaRef(schema: object, where: string): JsonObject {
  const ref = componentRefs.get(schema);
  if (!ref) throw new Error(`openapi: the schema of ${where} is not a contract module's component`);
  return { $ref: ref };
}

function operationObject(operation: ApiOperation): JsonObject {
  const route = `${operation.method.toUpperCase()} ${operation.path}`;
  const responses: JsonObject = {
    [operation.response.status ?? 200]: {
      description: operation.response.description,
      content: {
        'application/json': {
          schema: operation.response.schema
            ? schemaRef(operation.response.schema, `${route}'s response`)
            : { type: 'object' },
          ...(operation.response.example === undefined
            ? {}
            : { example: operation.response.example }),
        },
      },
    },
  };
  for (const status of [...new Set(operation.errors)].sort((a, b) => a - b)) {
    responses[status] = { $ref: `#/components/responses/${errorResponses[status].name}` };
  }
  const out: JsonObject = {
    operationId: operation.operationId,
    tags: [operation.tag],
    summary: operation.summary,
    description: operation.scope
      ? `${scopeText[operation.scope]}\n\n${operation.description}`
      : `No authentication.\n\n${operation.description}`,
    // OpenAPI 3.1 lets a bearer requirement name the roles it needs: the token's scope.
    security:
      operation.scope === null
        ? []
        : [{ bearerAuth: operation.scope === 'any' ? [] : [operation.scope] }],
    responses,
  };
  if (operation.request) {
    out.requestBody = {
      required: operation.request.required,
      content: {
        'application/json': {
          schema: schemaRef(operation.request.schema, `${route}'s request`),
          examples: operation.request.examples as unknown as Json,
        },
      },
    };
  }
  if (operation.parameters || operation.pathParameters) {
    out.parameters = [
      ...(operation.pathParameters ?? []).map((parameter) => ({
        in: 'path',
        required: true,
        ...parameter,
      })),
      ...(operation.parameters ?? []).map((parameter) => ({
        in: 'query',
        required: false,
        ...parameter,
      })),
    ];
  }
  return out;
}

/** The OpenAPI 3.1 document of the gateway's API port, built afresh (callers may keep it). */
export function buildOpenApiDocument(): JsonObject {
  const schemas = Object.fromEntries(
    Object.entries(componentSchemas).map(([name, schema]) => [
      name,
      toJsonSchema2020(schema, (node) => componentRefs.get(node)),
    ]),
  );
  const paths: JsonObject = {};
  for (const operation of apiOperations) {
    const item = (paths[operation.path] ?? {}) as JsonObject;
    item[operation.method] = operationObject(operation);
    paths[operation.path] = item;
  }
  const responses = Object.fromEntries(
    Object.values(errorResponses).map(({ name, description, example, headers }) => [
      name,
      {
        description,
        ...(headers ? { headers } : {}),
        content: {
          'application/json': { schema: schemaRef(errorBodySchema, 'an error'), example },
        },
      },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'screenfleet gateway',
      version: '0.1.0',
      description:
        "screenpipe-compatible HTTP API: content ingest and search, remote key presses, archive. Bodies' " +
        'rules are in libs/contracts/README.md. Schema extensions: format `date-time-offset` is ' +
        'an ISO 8601 date-time with a UTC offset (`Z`, `+08:00`); `x-max-bytes` bounds a string ' +
        'in UTF-8 bytes; `x-key-name` is a key name, modifier or key combination (a 400 lists ' +
        'the allowed names). Unknown fields are dropped, not refused.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    tags: [
      { name: 'ingest', description: 'Captured content in.' },
      { name: 'search', description: 'Captured content back out.' },
      { name: 'fleet', description: 'Which devices the service knows, and how they are doing.' },
      {
        name: 'operator',
        description: "Key presses, clicks and typing into a device's desktop (experimental).",
      },
      { name: 'archive', description: 'Moving old items to an archive store and back.' },
      { name: 'data', description: 'Deleting what was captured.' },
      { name: 'auth', description: "The caller's own grant." },
      { name: 'meta', description: 'This description.' },
    ],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Authorization: Bearer <token>. Tokens (GATEWAY_TOKENS) carry scopes (`ingest`, ' +
            '`search`, `operator`, `archive:read`, `archive:write`, `data:delete`) and may be ' +
            'bound to device ' +
            'names; each ' +
            "route's scope is in its security requirement and description.",
        },
      },
      schemas,
      responses,
    },
  };
}
