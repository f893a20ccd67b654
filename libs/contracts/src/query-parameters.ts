import type { FieldError } from './errors';

/**
 * What GET routes' query parsers share, for a query as express decoded it: each error named
 * `query.<param>` with its rule, and one value per parameter (a repeated one is an error, an
 * empty one is absent, anything but a string is an error).
 */
export function queryParameters<Name extends string>(query: Readonly<Record<string, unknown>>) {
  const errors: FieldError[] = [];
  const fail = (param: Name, rule: string, detail: string): undefined => {
    errors.push({ path: `query.${param}`, rule, detail });
    return undefined;
  };
  const text = (param: Name): string | undefined => {
    const value = Object.prototype.hasOwnProperty.call(query, param) ? query[param] : undefined;
    if (Array.isArray(value))
      return fail(param, 'repeated', `${param} is given ${value.length} times; send it once`);
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string') return fail(param, 'type', `${param} must be a string`);
    return value;
  };
  return { errors, fail, text };
}
