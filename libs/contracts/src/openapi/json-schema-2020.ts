import type { Json, JsonObject } from '../contract';

// Keywords whose value is a schema, a map of schemas or a list of schemas (JSON Schema 2020-12
// and draft-07); every other keyword's value is data (const, enum, required, discriminator...).
const schemaKeywords = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'not',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
const schemaMapKeywords = new Set([
  'properties',
  'patternProperties',
  'definitions',
  '$defs',
  'dependentSchemas',
]);
const schemaListKeywords = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * One schema as OpenAPI 3.1 needs it. The contracts' schemas are draft-07 (ajv's default `Ajv`
 * class compiles them, with no `$schema`); 3.1 speaks JSON Schema 2020-12. The keywords that
 * differ are renamed here, mechanically: `definitions` -> `$defs`, tuple `items` -> `prefixItems`
 * (with `additionalItems` -> `items`), `dependencies` -> `dependentRequired` /
 * `dependentSchemas`. A `$ref`/`$id` would need rebasing under #/components, so it is refused
 * rather than emitted broken. `refFor` names the component an embedded schema already is.
 */
export function toJsonSchema2020(
  schema: unknown,
  refFor: (node: object) => string | undefined = () => undefined,
): Json {
  const convert = (node: unknown, root: boolean): Json => {
    if (Array.isArray(node)) return node.map((item) => convert(item, false));
    if (!isObject(node)) return node as Json;
    const ref = root ? undefined : refFor(node);
    if (ref) return { $ref: ref };
    const out: JsonObject = {};
    const tuple = Array.isArray(node.items);
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' || key === '$id') {
        throw new Error(`toJsonSchema2020: ${key} is not supported (it would need rebasing)`);
      }
      if (key === '$schema') continue;
      if (key === 'definitions') out.$defs = convertMap(value);
      else if (key === 'items' && tuple) out.prefixItems = convertList(value);
      else if (key === 'additionalItems') {
        if (tuple) out.items = convert(value, false);
      } else if (key === 'dependencies' && isObject(value)) {
        for (const [name, dependency] of Object.entries(value)) {
          const target = Array.isArray(dependency) ? 'dependentRequired' : 'dependentSchemas';
          const bucket = (out[target] ?? {}) as JsonObject;
          bucket[name] = Array.isArray(dependency)
            ? (dependency as Json[])
            : convert(dependency, false);
          out[target] = bucket;
        }
      } else if (schemaKeywords.has(key)) out[key] = convert(value, false);
      else if (schemaMapKeywords.has(key)) out[key] = convertMap(value);
      else if (schemaListKeywords.has(key)) out[key] = convertList(value);
      else out[key] = structuredClone(value) as Json;
    }
    return out;
  };
  const convertMap = (map: unknown): Json =>
    isObject(map)
      ? Object.fromEntries(Object.entries(map).map(([name, sub]) => [name, convert(sub, false)]))
      : (map as Json);
  const convertList = (list: unknown): Json =>
    Array.isArray(list) ? list.map((sub) => convert(sub, false)) : (list as Json);
  return convert(schema, true);
}
