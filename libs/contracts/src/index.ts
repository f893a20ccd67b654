export * from './topology';
export * from './archive-state';
export * from './envelope';
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
export * from './schemas';
export * from './schemas/operator.schema';
export type * from './types';
export { validators } from './validators';
export { toFieldErrors, type Validator } from './validate';
export { scanJsonSizes } from './json-scan';
export * from './content-size';
export { searchTerms, searchWords } from './search-terms';
export {
  apiOperations,
  buildOpenApiDocument,
  toJsonSchema2020,
  type ApiOperation,
  type ApiScope,
  type ComponentName,
} from './openapi';
export * from './devices-query';
export * from './capture-status';
export * from './device-listing';
