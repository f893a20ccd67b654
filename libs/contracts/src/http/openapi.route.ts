import type { ApiOperation, Contract } from '../contract';

/** GET /openapi.json: the document openapi/document.ts builds from every contract module. */
export const openApiRoute: ApiOperation = {
  method: 'get',
  path: '/openapi.json',
  operationId: 'openApiDocument',
  tag: 'meta',
  summary: 'This document',
  description:
    'Served without a token: it describes the API and holds no data, and a client needs it ' +
    'before it has a token.',
  scope: null,
  response: { schema: null, description: 'The OpenAPI 3.1 document.' },
  errors: [405],
};

export const openApiContract = {
  validators: {},
  components: {},
  operations: [openApiRoute],
} satisfies Contract;
