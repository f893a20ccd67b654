import Ajv, { type ErrorObject, type SchemaObject, type ValidateFunction } from 'ajv';
import { ValidationError, type FieldError } from './errors';
import { maxBytesDetail, pruneForReport, shapeErrors, utf8Length } from './json-shape';
import { keyNameRules, type KeyNameKind } from './keys';
import { isDateTimeWithOffset } from './timestamp';

/** At most this many field errors are reported for one body: enough to fix it, bounded in size. */
export const MAX_REPORTED_ERRORS = 50;

/**
 * Two Ajv instances for the process, each schema compiled once per instance: a fail-fast one that
 * decides (one walk, stops at the first failure) and an allErrors one that words the report, only
 * ever run on a body shaped and pruned by json-shape.ts so that it meets few failures.
 */
function createAjv(allErrors: boolean): Ajv {
  const instance = new Ajv({
    allErrors,
    discriminator: true,
    // Unknown fields are tolerated and dropped (screenpipe clients add their own); this also
    // removes prototype-pollution keys such as __proto__ before anything reads the body.
    removeAdditional: true,
    verbose: true,
    allowUnionTypes: true,
  });
  instance.addFormat('date-time-offset', { type: 'string', validate: isDateTimeWithOffset });
  instance.addKeyword({
    keyword: 'x-key-name',
    type: 'string',
    schemaType: 'string',
    validate: (kind: KeyNameKind, data: string) => keyNameRules[kind].valid(data),
  });
  // Sizes that must hold in bytes, not characters (a device name is an AMQP routing key).
  instance.addKeyword({
    keyword: 'x-max-bytes',
    type: 'string',
    schemaType: 'number',
    validate: (maxBytes: number, data: string) => utf8Length(data) <= maxBytes,
  });
  return instance;
}
const ajv = createAjv(true);
const failFast = createAjv(false);

const failFastBySchema = new WeakMap<SchemaObject, ValidateFunction>();
function isValidAgainst(schema: SchemaObject, data: unknown): boolean {
  let validate = failFastBySchema.get(schema);
  if (!validate) {
    validate = failFast.compile(schema);
    failFastBySchema.set(schema, validate);
  }
  return validate(data);
}

function jsonPointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce(
      (path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part),
      '',
    );
}

function join(path: string, field: string): string {
  return path ? `${path}.${field}` : field;
}

/** The values a discriminated union's tag may take, read from its branches. */
function tagValues(error: ErrorObject): string {
  const tag = String((error.params as { tag: unknown }).tag);
  const branches = (error.parentSchema as { oneOf?: SchemaObject[] } | undefined)?.oneOf ?? [];
  return branches
    .map((branch) => (branch.properties as Record<string, { const?: unknown }>)[tag]?.const)
    .join(', ');
}

function describe(error: ErrorObject): FieldError | undefined {
  const path = jsonPointerToPath(error.instancePath);
  const name = path || 'body';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const field = join(path, String(params.missingProperty));
      return { path: field, rule: 'required', detail: `${field} is required` };
    }
    case 'discriminator': {
      const field = join(path, String(params.tag));
      return params.error === 'tag' && params.tagValue === undefined
        ? { path: field, rule: 'required', detail: `${field} is required` }
        : { path: field, rule: 'enum', detail: `${field} must be one of: ${tagValues(error)}` };
    }
    case 'type':
      return {
        path,
        rule: 'type',
        detail: `${name} must be ${String(params.type).replace(',', ' or ')}`,
      };
    case 'format':
      return {
        path,
        rule: 'format',
        detail: `${name} must be an ISO 8601 date-time with a UTC offset, e.g. 2026-11-22T10:00:00Z`,
      };
    case 'x-key-name': {
      const { what, allowed } = keyNameRules[(error.schema as KeyNameKind) ?? 'key'];
      return {
        path,
        rule: 'allowed-values',
        detail: `${name} "${String(error.data)}" is not an allowed ${what}; allowed: ${allowed}`,
      };
    }
    case 'x-max-bytes':
      return { path, rule: 'maxBytes', detail: maxBytesDetail(name, Number(error.schema)) };
    case 'not': {
      const parent = error.parentSchema as { description?: string } | undefined;
      return {
        path,
        rule: 'not',
        detail: parent?.description ?? `${name} ${error.message ?? 'is invalid'}`,
      };
    }
    case 'if':
    case 'oneOf':
    case 'anyOf':
      // Always accompanied by the errors of the branch that failed, which say more.
      return undefined;
    default:
      return { path, rule: error.keyword, detail: `${name} ${error.message ?? 'is invalid'}` };
  }
}

export function toFieldErrors(errors: ErrorObject[] | null | undefined): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of errors ?? []) {
    const field = describe(error);
    const key = field && `${field.path}|${field.rule}|${field.detail}`;
    if (!field || !key || seen.has(key)) continue;
    seen.add(key);
    out.push(field);
    if (out.length === MAX_REPORTED_ERRORS) break;
  }
  return out;
}

export interface Validator<T> {
  /** Field errors, empty when valid. Drops unknown fields from `data` in place. */
  check(data: unknown): FieldError[];
  /** Returns the value typed, or throws ValidationError naming every failing field. */
  parse(data: unknown): T;
}

/**
 * `relations`: the rules between fields a JSON Schema cannot say (a range that ends before it
 * starts), checked once the value has the schema's shape; they name every field involved.
 */
export function compileValidator<T>(
  schema: SchemaObject,
  what: string,
  relations?: (value: T) => FieldError[],
): Validator<T> {
  // Compiled on first use (ajv takes ~20 ms a schema): a process or thread that imports the
  // contracts but never checks this shape (the SQLite writer thread) does not pay for it.
  let compiled: { report: ValidateFunction; decide: ValidateFunction } | undefined;
  const validatorsOf = () => {
    if (!compiled) {
      compiled = { report: ajv.compile(schema), decide: failFast.compile(schema) };
      failFastBySchema.set(schema, compiled.decide);
    }
    return compiled;
  };
  const check = (data: unknown): FieldError[] => {
    const oversized = shapeErrors(schema, data, MAX_REPORTED_ERRORS);
    if (oversized.length > 0) return oversized;
    const { report, decide } = validatorsOf();
    if (decide(data)) return relations ? relations(data as T) : [];
    const first = toFieldErrors(decide.errors);
    const pruned = pruneForReport(schema, data, isValidAgainst, MAX_REPORTED_ERRORS);
    return report(pruned) ? first : toFieldErrors(report.errors);
  };
  return {
    check,
    parse(data: unknown): T {
      const errors = check(data);
      if (errors.length > 0) {
        const first = errors[0]?.detail ?? 'invalid';
        const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
        throw new ValidationError(`invalid ${what}: ${first}${more}`, errors);
      }
      return data as T;
    },
  };
}
