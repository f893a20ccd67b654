export * from './topology';
export * from './archive-state';
export { checkMessage } from './message-check';
export * from './errors';
export * from './limits';
export * from './keys';
export * from './operator-timing';
export * from './search-timing';
export * from './operator-signing';
export * from './timestamp';
export {
  parseSearchQuery,
  parseSearchTime,
  searchParameterNames,
  type SearchOrder,
  type SearchParameters,
} from './search-query';
export * from './common.schema';
// One module per route (http/) and per message (messages/): its schema, type, validator and
// OpenAPI description. The registries are derived from their list (registry.ts).
export * from './http/common.contract';
export * from './http/add.route';
export * from './http/search.route';
export * from './http/operator.routes';
export * from './http/archive.routes';
export * from './http/data-delete.routes';
export * from './http/devices.routes';
export * from './http/health.route';
export * from './http/whoami.route';
export * from './http/tokens.routes';
export * from './http/audit.route';
export * from './http/openapi.route';
export * from './messages/envelope';
export * from './messages/content-batch.message';
export * from './messages/operator.messages';
export * from './messages/search.messages';
export * from './messages/archive.messages';
export * from './messages/devices.messages';
export * from './messages/tokens.messages';
export * from './messages/audit.messages';
export * from './scopes';
export * from './token-secrets';
export { validators, apiOperations, type ComponentName } from './registry';
export type { ApiOperation, ApiScope, Contract } from './contract';
export { toFieldErrors, type Validator } from './validate';
export { scanJsonSizes } from './json-scan';
export * from './content-size';
export { itemText, queryTerms, searchTerms, searchWords, textLength } from './search-terms';
export { buildOpenApiDocument } from './openapi/document';
export { toJsonSchema2020 } from './openapi/json-schema-2020';
export * from './devices-query';
export * from './audit-query';
export * from './capture-status';
export * from './device-listing';
