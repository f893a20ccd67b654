/**
 * Env config: every process describes its variables as data, parses them once at start and
 * gets a frozen, typed object. This is the only module in the repo that reads process.env.
 */

interface VarBase {
  /** The environment variable name, e.g. `GATEWAY_PORT`. */
  env: string;
  /** One line for the README table. */
  doc: string;
  /** Hide the value in error messages and the README table (tokens, URLs with passwords). */
  secret?: boolean;
  /** Without a default: `true` makes the value `undefined` when unset instead of an error. */
  optional?: boolean;
}

export interface StringVar extends VarBase {
  kind: 'string';
  default?: string;
}
export interface IntegerVar extends VarBase {
  kind: 'integer';
  min?: number;
  max?: number;
  default?: number;
}
export interface NumberVar extends VarBase {
  kind: 'number';
  min?: number;
  max?: number;
  default?: number;
}
export interface BooleanVar extends VarBase {
  kind: 'boolean';
  default?: boolean;
}
export interface EnumVar extends VarBase {
  kind: 'enum';
  values: readonly string[];
  default?: string;
}
export interface UrlVar extends VarBase {
  kind: 'url';
  /** Allowed schemes without the colon, e.g. `['amqp', 'amqps']`; any when absent. */
  protocols?: readonly string[];
  default?: string;
}
/**
 * Comma-separated URLs (the nodes of one cluster, say), each checked like a `url`; at least one.
 * The parsed value keeps the order given.
 */
export interface UrlListVar extends VarBase {
  kind: 'urls';
  /** Allowed schemes without the colon, e.g. `['amqp', 'amqps']`; any when absent. */
  protocols?: readonly string[];
  default?: readonly string[];
}
/** A duration in milliseconds; the env value may carry a unit: `500`, `500ms`, `30s`, `5m`, `1h`. */
export interface DurationVar extends VarBase {
  kind: 'duration';
  /** Milliseconds. */
  min?: number;
  default?: number;
}
/** Comma-separated strings; items are trimmed and empty items dropped. */
export interface ListVar extends VarBase {
  kind: 'list';
  default?: readonly string[];
}

export type VarSpec =
  | StringVar
  | IntegerVar
  | NumberVar
  | BooleanVar
  | EnumVar
  | UrlVar
  | UrlListVar
  | DurationVar
  | ListVar;

/** Keyed by the camelCase property the config object will have. */
export type ConfigSpec = Readonly<Record<string, VarSpec>>;

type KindValue<V> = V extends { kind: 'string' | 'url' }
  ? string
  : V extends { kind: 'integer' | 'number' | 'duration' }
    ? number
    : V extends { kind: 'boolean' }
      ? boolean
      : V extends { kind: 'enum'; values: readonly (infer E)[] }
        ? E
        : V extends { kind: 'list' | 'urls' }
          ? readonly string[]
          : never;

type VarValue<V> = V extends { default: unknown }
  ? KindValue<V>
  : V extends { optional: true }
    ? KindValue<V> | undefined
    : KindValue<V>;

/** The parsed object a spec describes. */
export type Config<S extends ConfigSpec> = { readonly [K in keyof S]: VarValue<S[K]> };

export type Env = Readonly<Record<string, string | undefined>>;

export interface ConfigIssue {
  env: string;
  /** As read from the environment (masked when secret); undefined when unset. */
  value: string | undefined;
  rule: string;
}

/** One error for the whole environment, so an operator fixes everything in one go. */
export class ConfigError extends Error {
  readonly code = 'config_invalid';

  constructor(readonly issues: readonly ConfigIssue[]) {
    super(
      `invalid configuration (${issues.length} variable${issues.length === 1 ? '' : 's'}):\n` +
        issues.map(formatIssue).join('\n'),
    );
    this.name = 'ConfigError';
  }
}

function formatIssue(issue: ConfigIssue): string {
  return `${issue.env}=${issue.value ?? '<unset>'} (${issue.rule})`;
}

/**
 * Returns the spec unchanged with its literal types kept (`const`), so enum values become a
 * union in the parsed config. Checks the spec itself: a bad default is a bug, not bad env.
 */
export function defineConfig<const S extends ConfigSpec>(spec: S): S {
  const seen = new Set<string>();
  for (const [key, v] of Object.entries(spec)) {
    if (!/^[A-Z][A-Z0-9_]*$/.test(v.env)) {
      throw new Error(`config spec ${key}: env name ${v.env} must be UPPER_SNAKE_CASE`);
    }
    if (seen.has(v.env)) throw new Error(`config spec ${key}: env name ${v.env} used twice`);
    seen.add(v.env);
    const problem = checkDefault(v);
    if (problem) throw new Error(`config spec ${key}: default ${problem}`);
  }
  return spec;
}

/**
 * The process's environment as it is, for a launcher that hands it on to the processes it starts.
 * Read a variable through a spec and loadConfig, never from this.
 */
export function currentEnv(): Env {
  return process.env;
}

/**
 * The same variable with no default: `undefined` when unset, so a caller that fills in a
 * default of its own (the launcher's, under its data directory) can tell unset from set.
 */
export function withoutDefault<V extends VarSpec>(v: V): Omit<V, 'default'> & { optional: true } {
  const { default: _default, ...rest } = v;
  return { ...rest, optional: true };
}

/** Parses every variable of the spec; throws one ConfigError listing all bad ones. */
export function loadConfig<S extends ConfigSpec>(spec: S, env: Env = process.env): Config<S> {
  const result: Record<string, unknown> = {};
  const issues: ConfigIssue[] = [];
  for (const [key, v] of Object.entries(spec)) {
    const raw = env[v.env];
    // Compose files and shells often set `NAME=` to mean "not set": treat blank as unset.
    if (raw === undefined || raw.trim() === '') {
      if (v.default !== undefined) result[key] = v.default;
      else if (v.optional) result[key] = undefined;
      else issues.push({ env: v.env, value: undefined, rule: 'required' });
      continue;
    }
    const parsed = parseValue(v, raw);
    if (parsed.ok) result[key] = parsed.value;
    else issues.push({ env: v.env, value: v.secret ? '***' : raw, rule: parsed.rule });
  }
  if (issues.length > 0) throw new ConfigError(issues);
  // The cast is the one place where the data spec meets its inferred type.
  return Object.freeze(result) as Config<S>;
}

type Parsed = { ok: true; value: unknown } | { ok: false; rule: string };

const BOOLEANS: Readonly<Record<string, boolean>> = {
  true: true,
  false: false,
  '1': true,
  '0': false,
  yes: true,
  no: false,
};

const DURATION_UNITS_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

function parseValue(v: VarSpec, raw: string): Parsed {
  const text = v.kind === 'string' ? raw : raw.trim();
  const fail = (): Parsed => ({ ok: false, rule: describeRule(v) });
  switch (v.kind) {
    case 'string':
      return { ok: true, value: text };
    case 'integer': {
      const n = /^[+-]?\d+$/.test(text) ? Number(text) : NaN;
      return Number.isSafeInteger(n) && inRange(n, v.min, v.max) ? { ok: true, value: n } : fail();
    }
    case 'number': {
      const n = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text) ? Number(text) : NaN;
      return Number.isFinite(n) && inRange(n, v.min, v.max) ? { ok: true, value: n } : fail();
    }
    case 'boolean': {
      const b = BOOLEANS[text.toLowerCase()];
      return b === undefined ? fail() : { ok: true, value: b };
    }
    case 'enum':
      return v.values.includes(text) ? { ok: true, value: text } : fail();
    case 'url':
      return isUrl(text, v.protocols) ? { ok: true, value: text } : fail();
    case 'duration': {
      const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text);
      const factor = DURATION_UNITS_MS[match?.[2] ?? 'ms'];
      if (!match?.[1] || factor === undefined) return fail();
      const ms = Math.round(Number(match[1]) * factor);
      return inRange(ms, v.min, undefined) ? { ok: true, value: ms } : fail();
    }
    case 'urls':
      return parseUrlList(v, splitList(text));
    case 'list':
      return { ok: true, value: Object.freeze(splitList(text)) };
  }
}

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** Names the first bad item by its position only: the value itself may hold a password. */
function parseUrlList(v: UrlListVar, items: string[]): Parsed {
  if (items.length === 0) return { ok: false, rule: `${describeRule(v)}; none given` };
  const bad = items.findIndex((item) => !isUrl(item, v.protocols));
  if (bad === -1) return { ok: true, value: Object.freeze(items) };
  return { ok: false, rule: `${describeRule(v)}; item ${bad + 1} of ${items.length} is not` };
}

function inRange(n: number, min: number | undefined, max: number | undefined): boolean {
  return (min === undefined || n >= min) && (max === undefined || n <= max);
}

function isUrl(text: string, protocols: readonly string[] | undefined): boolean {
  if (!URL.canParse(text)) return false;
  const scheme = new URL(text).protocol.replace(/:$/, '');
  return protocols === undefined || protocols.includes(scheme);
}

/** The rule as printed in errors and in the README table. */
export function describeRule(v: VarSpec): string {
  switch (v.kind) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return `${v.kind}${describeRange(v.min, v.max)}`;
    case 'boolean':
      return 'boolean: true/false/1/0/yes/no';
    case 'enum':
      return `one of: ${v.values.join(', ')}`;
    case 'url':
      return v.protocols ? `URL with scheme ${v.protocols.join(' or ')}` : 'URL';
    case 'urls':
      return v.protocols
        ? `comma-separated URLs, each with scheme ${v.protocols.join(' or ')}`
        : 'comma-separated URLs';
    case 'duration':
      return `duration: milliseconds, or a number with unit ms/s/m/h such as 30s${v.min === undefined ? '' : `; at least ${v.min} ms`}`;
    case 'list':
      return 'comma-separated list';
  }
}

function describeRange(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`;
  if (min !== undefined) return ` >= ${min}`;
  if (max !== undefined) return ` <= ${max}`;
  return '';
}

function checkDefault(v: VarSpec): string | undefined {
  if (v.default === undefined) return undefined;
  const ok = (() => {
    switch (v.kind) {
      case 'string':
      case 'boolean':
        return true;
      case 'integer':
        return Number.isSafeInteger(v.default) && inRange(v.default, v.min, v.max);
      case 'number':
        return Number.isFinite(v.default) && inRange(v.default, v.min, v.max);
      case 'duration':
        return Number.isSafeInteger(v.default) && v.default >= 0;
      case 'enum':
        return v.values.includes(v.default);
      case 'url':
        return isUrl(v.default, v.protocols);
      case 'list':
        return v.default.every((item) => item.trim() !== '' && !item.includes(','));
      case 'urls':
        return v.default.length > 0 && v.default.every((item) => isUrl(item, v.protocols));
    }
  })();
  return ok ? undefined : `${JSON.stringify(v.default)} breaks its rule (${describeRule(v)})`;
}

/** A markdown table of the spec (variable, default, description) for a service's README. */
export function renderConfigMarkdown(spec: ConfigSpec): string {
  const rows = Object.values(spec).map((v) => {
    const rule = v.kind === 'string' ? '' : ` (${describeRule(v)})`;
    return `| \`${v.env}\` | ${describeDefault(v)} | ${escapeCell(v.doc + rule)} |`;
  });
  return ['| Variable | Default | Description |', '| --- | --- | --- |', ...rows].join('\n') + '\n';
}

function describeDefault(v: VarSpec): string {
  if (v.default === undefined) return v.optional ? '_unset_' : '**required**';
  if (v.secret) return '_secret_';
  const text = Array.isArray(v.default) ? v.default.join(',') : String(v.default);
  return text === '' ? '_empty_' : `\`${escapeCell(text)}\``;
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|');
}
