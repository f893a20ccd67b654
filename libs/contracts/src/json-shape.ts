import type { FieldError } from './errors';

/**
 * Validation that costs what the limits allow, not what was sent. ajv (allErrors) records an
 * error per failing element before a size limit says no: 8 million zeros in content.data took
 * 12 s and 2 GB. So, before ajv walks a body:
 *
 * - `shapeErrors` follows the schema (properties, items, the discriminated oneOf branch) and
 *   refuses arrays over maxItems, strings over maxLength and x-max-bytes, without ever entering
 *   an over-long array or counting past a limit;
 * - `pruneForReport` shortens, for the error report only, every array to just past its first
 *   `budget` invalid elements (each checked by a fail-fast validator), so the allErrors run that
 *   words the report meets a bounded number of failures whatever the body holds. Elements kept
 *   keep their index, so paths stay true. Only a body already known invalid is pruned; our
 *   schemas use no minItems/contains, which a shorter array could newly fail.
 */

type Schema = Record<string, unknown>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const asSchema = (value: unknown): Schema | undefined => (isObject(value) ? value : undefined);

/**
 * What the walk needs from a schema node, read once: its size limits, its children, and for a
 * discriminated oneOf the branch per tag value. Nodes with no limit anywhere below are left out.
 */
interface ShapePlan {
  maxItems?: number;
  maxLength?: number;
  maxBytes?: number;
  items?: ShapePlan;
  properties: Array<[string, ShapePlan]>;
  tag?: { name: string; branches: Map<unknown, ShapePlan> };
}

const plans = new WeakMap<Schema, ShapePlan | undefined>();

const numberOr = (value: unknown) => (typeof value === 'number' ? value : undefined);

function planOf(schema: Schema): ShapePlan | undefined {
  if (plans.has(schema)) return plans.get(schema);
  plans.set(schema, undefined); // a recursive schema meets itself as "nothing to check"
  const items = asSchema(schema.items) && planOf(asSchema(schema.items) as Schema);
  const properties: Array<[string, ShapePlan]> = [];
  for (const [key, child] of Object.entries(asSchema(schema.properties) ?? {})) {
    const plan = asSchema(child) && planOf(child as Schema);
    if (plan) properties.push([key, plan]);
  }
  const tagName = asSchema(schema.discriminator)?.propertyName;
  const branches = new Map<unknown, ShapePlan>();
  if (typeof tagName === 'string' && Array.isArray(schema.oneOf)) {
    for (const branch of schema.oneOf.map(asSchema)) {
      const tagValue = asSchema(asSchema(branch?.properties)?.[tagName])?.const;
      const plan = branch && planOf(branch);
      if (plan && tagValue !== undefined) branches.set(tagValue, plan);
    }
  }
  const plan: ShapePlan = {
    maxItems: numberOr(schema.maxItems),
    maxLength: numberOr(schema.maxLength),
    maxBytes: numberOr(schema['x-max-bytes']),
    items,
    properties,
    tag: typeof tagName === 'string' && branches.size > 0 ? { name: tagName, branches } : undefined,
  };
  const relevant =
    plan.maxItems !== undefined ||
    plan.maxLength !== undefined ||
    plan.maxBytes !== undefined ||
    items !== undefined ||
    properties.length > 0 ||
    plan.tag !== undefined;
  const result = relevant ? plan : undefined;
  plans.set(schema, result);
  return result;
}

const hasOwn = (data: object, key: string) => Object.prototype.hasOwnProperty.call(data, key);

/** True when `text` has more than `max` code points (ajv's maxLength unit); stops at max + 1. */
export function exceedsCodePoints(text: string, max: number): boolean {
  if (text.length <= max) return false;
  if (text.length > 2 * max) return true;
  let count = 0;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i += 1;
    }
    count += 1;
    if (count > max) return true;
  }
  return false;
}

/** UTF-8 length of a string as Buffer.byteLength counts it (a lone surrogate is 3 bytes). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}

const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

function stringError(plan: ShapePlan, text: string, here: () => string): FieldError | undefined {
  const tooLong = plan.maxLength !== undefined && exceedsCodePoints(text, plan.maxLength);
  const tooBig = !tooLong && plan.maxBytes !== undefined && utf8Length(text) > plan.maxBytes;
  if (!tooLong && !tooBig) return undefined;
  const path = here();
  const name = path || 'body';
  if (tooLong) {
    return {
      path,
      rule: 'maxLength',
      detail: `${name} must NOT have more than ${plan.maxLength} characters`,
    };
  }
  return { path, rule: 'maxBytes', detail: maxBytesDetail(name, plan.maxBytes ?? 0) };
}

export const maxBytesDetail = (name: string, maxBytes: number) =>
  `${name} must NOT be longer than ${maxBytes} bytes in UTF-8`;

/**
 * Over-long arrays and strings in `data`, by the schema's maxItems, maxLength and x-max-bytes;
 * at most `max` of them. Cost: one step per node the schema lets through, never more.
 */
export function shapeErrors(schema: Schema, data: unknown, max: number): FieldError[] {
  const root = planOf(schema);
  const out: FieldError[] = [];
  // The path is built only for an error: one shared stack of segments, no string per node.
  const segments: Array<string | number> = [];
  const here = () =>
    segments.reduce<string>(
      (path, part) =>
        typeof part === 'number' ? `${path}[${part}]` : path ? `${path}.${part}` : part,
      '',
    );
  const visit = (plan: ShapePlan, value: unknown): void => {
    if (out.length >= max) return;
    if (typeof value === 'string') {
      const error = stringError(plan, value, here);
      if (error) out.push(error);
    } else if (Array.isArray(value)) {
      if (plan.maxItems !== undefined && value.length > plan.maxItems) {
        const path = here();
        out.push({
          path,
          rule: 'maxItems',
          detail: `${path || 'body'} must NOT have more than ${plan.maxItems} items`,
        });
        return;
      }
      const items = plan.items;
      if (!items) return;
      for (let i = 0; i < value.length; i += 1) {
        segments.push(i);
        visit(items, value[i]);
        segments.pop();
      }
    } else if (isObject(value)) {
      visitProperties(plan, value);
      const branch = plan.tag?.branches.get(value[plan.tag.name]);
      if (branch) visitProperties(branch, value);
    }
  };
  const visitProperties = (plan: ShapePlan, value: Record<string, unknown>) => {
    for (const [key, child] of plan.properties) {
      if (!hasOwn(value, key)) continue;
      segments.push(key);
      visit(child, value[key]);
      segments.pop();
    }
  };
  if (root) visit(root, data);
  return out;
}

/** The schema itself and, for a discriminated oneOf, the branch the data's tag selects. */
function applicable(schema: Schema, data: Record<string, unknown>): Schema[] {
  const tag = asSchema(schema.discriminator)?.propertyName;
  if (typeof tag !== 'string' || !Array.isArray(schema.oneOf)) return [schema];
  const chosen = schema.oneOf
    .map(asSchema)
    .find((branch) => asSchema(asSchema(branch?.properties)?.[tag])?.const === data[tag]);
  return chosen ? [schema, chosen] : [schema];
}

function propertiesOf(schema: Schema, data: Record<string, unknown>): Array<[string, Schema]> {
  const out: Array<[string, Schema]> = [];
  for (const applied of applicable(schema, data)) {
    for (const [key, child] of Object.entries(asSchema(applied.properties) ?? {})) {
      const childSchema = asSchema(child);
      if (childSchema && hasOwn(data, key)) out.push([key, childSchema]);
    }
  }
  return out;
}

/** A fail-fast check of `data` against one sub-schema (compiled once, cached by the caller). */
export type IsValid = (schema: Schema, data: unknown) => boolean;

/**
 * A copy of `data` for wording the error report: each array cut just after its `budget`-th
 * invalid element, recursively. Untouched parts are shared, not copied.
 */
export function pruneForReport(
  schema: Schema,
  data: unknown,
  isValid: IsValid,
  budget: number,
): unknown {
  if (Array.isArray(data)) {
    const items = asSchema(schema.items);
    if (!items) return data;
    const out: unknown[] = [];
    let invalid = 0;
    for (const element of data) {
      if (isValid(items, element)) {
        out.push(element);
        continue;
      }
      out.push(pruneForReport(items, element, isValid, budget));
      invalid += 1;
      if (invalid >= budget) break;
    }
    return out;
  }
  if (!isObject(data)) return data;
  let copy: Record<string, unknown> | undefined;
  for (const [key, child] of propertiesOf(schema, data)) {
    const pruned = pruneForReport(child, data[key], isValid, budget);
    if (pruned !== data[key]) {
      copy ??= { ...data };
      copy[key] = pruned;
    }
  }
  return copy ?? data;
}
