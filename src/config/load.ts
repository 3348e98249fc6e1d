// Loads configuration once at boot: TOML file, then environment, checked against the key table.
import { readFileSync, existsSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { Refusal } from '../shared/refusal.js';
import { listenOrigin } from './public-base-url.js';
import { CONFIG_KEYS, envNameOf, LOADER_ENV, type KeySpec } from './schema.js';

export type ConfigValue = boolean | number | string | string[];
export type Config = Readonly<Record<string, ConfigValue | undefined>>;

export class ConfigError extends Refusal {
  constructor(readonly key: string, message: string) {
    super(`config: ${key}: ${message}`);
  }
}

export interface LoadOptions {
  /** Explicit `--config PATH`. */
  configPath?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Values set by the caller (tests), applied last. */
  overrides?: Record<string, ConfigValue | undefined>;
}

/** Where each configured value came from, for messages about it (`DATABASE_URL`, `database_url in ./keepwatch.toml`). */
const SOURCES = new WeakMap<Config, ReadonlyMap<string, string>>();

/** How a message should name `key` of `config`: the environment variable or file that set it, else the key. */
export const sourceOf = (config: Config, key: string): string => SOURCES.get(config)?.get(key) ?? key;

export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  const values: Record<string, ConfigValue | undefined> = {};
  const sources = new Map<string, string>();
  for (const [key, spec] of Object.entries(CONFIG_KEYS)) values[key] = spec.default as ConfigValue | undefined;

  const file = resolveConfigFile(options, env);
  if (file) {
    const fromFile = readTomlFile(file);
    Object.assign(values, fromFile);
    for (const key of Object.keys(fromFile)) sources.set(key, `${key} in ${file}`);
  }
  for (const [key, { value, name }] of readEnv(env)) {
    values[key] = value;
    sources.set(key, name);
  }
  for (const [key, value] of Object.entries(options.overrides ?? {})) {
    const spec = CONFIG_KEYS[key];
    if (!spec) throw new ConfigError(key, 'unknown key');
    values[key] = value === undefined ? undefined : coerce(key, spec, value, typeof value === 'string');
    sources.delete(key);
  }
  values['auth.public_base_url'] ??= derivedPublicBaseUrl(values);
  const config = Object.freeze(values);
  SOURCES.set(config, sources);
  return config;
}

/** Unset `auth.public_base_url` is where the server listens, so every link and ping URL reaches it. */
function derivedPublicBaseUrl(values: Record<string, ConfigValue | undefined>): string {
  const origin = listenOrigin(values['http.host'] as string, values['http.port'] as number);
  if (!origin) throw new ConfigError('auth.public_base_url', `unset, and http.host ${show(values['http.host'])} is no URL host: set it`);
  return origin;
}

function resolveConfigFile(options: LoadOptions, env: NodeJS.ProcessEnv): string | undefined {
  // The refusal names where the path came from, so a stale KEEPWATCH_CONFIG is not hunted on the command line.
  const [source, explicit] = options.configPath !== undefined ? ['--config', options.configPath] : ['KEEPWATCH_CONFIG', env.KEEPWATCH_CONFIG];
  if (explicit) {
    if (!existsSync(explicit)) throw new ConfigError(source, `file not found: ${explicit}`);
    return explicit;
  }
  const local = `${options.cwd ?? process.cwd()}/keepwatch.toml`;
  return existsSync(local) ? local : undefined;
}

function readTomlFile(path: string): Record<string, ConfigValue> {
  let doc: Record<string, unknown>;
  try {
    // Integers as bigint, so a float (`5.0`) is told from a whole number.
    doc = parseToml(readFileSync(path, 'utf8'), { integersAsBigInt: true }) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(path, `not valid TOML: ${(err as Error).message}`);
  }
  const out: Record<string, ConfigValue> = {};
  for (const [key, raw] of flatten(doc)) {
    const spec = CONFIG_KEYS[key];
    if (!spec) throw new ConfigError(key, 'unknown key');
    if (spec.type === 'integer' && typeof raw === 'number') {
      throw new ConfigError(key, `expected a whole number, got the float ${Number.isInteger(raw) ? raw.toFixed(1) : raw}`);
    }
    out[key] = coerce(key, spec, raw, false);
  }
  return out;
}

/** Nested TOML tables become dotted keys; arrays are values. */
function* flatten(doc: Record<string, unknown>, prefix = ''): Generator<[string, unknown]> {
  for (const [name, value] of Object.entries(doc)) {
    const key = prefix ? `${prefix}.${name}` : name;
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)) {
      yield* flatten(value as Record<string, unknown>, key);
    } else {
      yield [key, value];
    }
  }
}

/** Each key the environment sets, with its value and the variable that set it. */
function readEnv(env: NodeJS.ProcessEnv): Map<string, { value: ConfigValue; name: string }> {
  const out = new Map<string, { value: ConfigValue; name: string }>();
  const known = new Set<string>(LOADER_ENV);
  for (const [key, spec] of Object.entries(CONFIG_KEYS)) {
    const name = envNameOf(key);
    known.add(name);
    for (const alias of [name, ...(spec.envAliases ?? [])].reverse()) {
      // Aliases (PORT, DATABASE_URL) win over the KEEPWATCH_ form only when the latter is absent.
      const raw = env[alias];
      if (raw !== undefined && raw !== '') out.set(key, { value: coerce(alias, spec, raw, true), name: alias });
    }
  }
  for (const name of Object.keys(env)) {
    if (name.startsWith('KEEPWATCH_') && !known.has(name)) throw new ConfigError(name, 'unknown key');
  }
  return out;
}

/** `fromText`: the value is env text (`"true"`, `"8080"`, `"a,b"`); a TOML value must have the key's own type. */
function coerce(key: string, spec: KeySpec, raw: unknown, fromText: boolean): ConfigValue {
  const fromEnv = fromText && typeof raw === 'string';
  switch (spec.type) {
    case 'boolean': {
      if (typeof raw === 'boolean') return raw;
      if (fromEnv && /^(true|1|yes|on)$/i.test(raw)) return true;
      if (fromEnv && /^(false|0|no|off)$/i.test(raw)) return false;
      throw new ConfigError(key, `expected a boolean, got ${show(raw)}`);
    }
    case 'integer': {
      const n = typeof raw === 'number' || typeof raw === 'bigint' ? Number(raw) : fromEnv && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(n)) throw new ConfigError(key, `expected a whole number, got ${show(raw)}`);
      if (spec.min !== undefined && n < spec.min) throw new ConfigError(key, `must be at least ${spec.min}, got ${n}`);
      if (spec.max !== undefined && n > spec.max) throw new ConfigError(key, `must be at most ${spec.max}, got ${n}`);
      return n;
    }
    case 'string': {
      if (typeof raw !== 'string') throw new ConfigError(key, `expected a string, got ${show(raw)}`);
      if (spec.oneOf && !spec.oneOf.includes(raw)) throw new ConfigError(key, `must be one of ${spec.oneOf.join(', ')}, got ${show(raw)}`);
      return spec.url ? checkUrl(key, spec, raw) : raw;
    }
    case 'string[]': {
      const list = fromEnv ? raw.split(',').map((s) => s.trim()).filter(Boolean) : raw;
      if (!Array.isArray(list) || !list.every((s) => typeof s === 'string')) throw new ConfigError(key, `expected a list of strings, got ${show(raw)}`);
      const bad = spec.oneOf ? list.find((s) => !spec.oneOf!.includes(s)) : undefined;
      if (bad !== undefined) throw new ConfigError(key, `unknown value ${show(bad)}; allowed: ${spec.oneOf!.join(', ')}`);
      return list;
    }
  }
}

/**
 * A URL key's value, refused at load rather than failing where it is first used (a mail sent, a
 * link minted). A secret's value is never echoed: it may hold a password.
 */
function checkUrl(key: string, spec: KeySpec, raw: string): string {
  const rule = spec.url!;
  const refuse = (secretSummary: string): never => {
    throw new ConfigError(key, `expected ${rule.expected}, got ${spec.secret ? secretSummary : show(raw)}`);
  };
  if (!URL.canParse(raw)) return refuse('something that is not a URL');
  const url = new URL(raw);
  if (!rule.schemes.includes(url.protocol)) return refuse(`a URL of scheme ${url.protocol.slice(0, -1)}`);
  if (url.protocol !== 'file:' && !url.hostname) return refuse('a URL without a host');
  if (!rule.origin) return raw;
  // A trailing slash is tolerated; what an origin does not hold is refused, not silently dropped.
  if (url.pathname !== '/' || url.username || url.password || /[?#]/.test(raw)) return refuse('a URL with a path, query, fragment or credentials');
  return url.origin;
}

function show(raw: unknown): string {
  return typeof raw === 'string' ? JSON.stringify(raw) : Array.isArray(raw) ? 'a list' : String(raw);
}

/** Typed accessors: a key's type is fixed by the table, so a mismatch is a programming error. */
export const cfg = {
  bool: (c: Config, key: string): boolean => c[key] as boolean,
  int: (c: Config, key: string): number => c[key] as number,
  str: (c: Config, key: string): string => c[key] as string,
  optStr: (c: Config, key: string): string | undefined => c[key] as string | undefined,
  list: (c: Config, key: string): string[] => c[key] as string[],
};
