// Strict request validation (monitoring-api.md, Conventions 7): bodies are never coerced and never
// lose unknown keys; an unknown key is 422 INVALID_JSON naming its full path and what its object accepts.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { AppError, ERROR_CODES, type ErrorCode } from '../shared/errors.js';
import { isUuid } from '../shared/ids.js';

// ajv-formats ships CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean, allErrors = false): Ajv {
  const ajv = new Ajv({
    allErrors,
    removeAdditional: false,
    useDefaults: true,
    coerceTypes: coerce ? 'array' : false,
    verbose: true,
    strict: false,
    // A tagged `oneOf` evaluates only the branch its tag names: defaults of sibling branches never
    // leak into the data, and errors speak of the branch the client meant.
    discriminator: true,
  });
  addFormats(ajv);
  // ajv-formats' uuid also takes a `urn:uuid:` prefix, which PostgreSQL's uuid type refuses: the
  // plain form only, as every id is written.
  ajv.addFormat('uuid', isUuid);
  // Its date-time also takes an offset without its colon (`+0530`) or its minutes (`+05`), which
  // RFC 3339's `time-numoffset` does not: the RFC's shape first, then its calendar checks.
  const dateTime = ajv.formats['date-time'] as { validate: (text: string) => boolean };
  ajv.addFormat('date-time', (text: string) => RFC3339_OFFSET.test(text) && dateTime.validate(text));
  return ajv;
}

const RFC3339_OFFSET = /(?:z|[+-]\d\d:\d\d)$/i;

const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);
// Used only once a body has failed, to find an unknown key hidden behind an earlier failure.
const bodyAjvAllErrors = makeAjv(false, true);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const validate: ValidateFunction = (httpPart === 'body' ? bodyAjv : paramAjv).compile(schema as object);
  const part = httpPart ?? 'body';
  const numerals = part === 'querystring' ? numeralRules(schema) : [];
  const singles = part === 'querystring' ? singleValued(schema) : [];
  return (data: unknown) => {
    // A repeated parameter arrives as a list: say so, rather than that a list is no integer.
    const repeated = singles.find((key) => Array.isArray((data as Record<string, unknown>)[key]));
    if (repeated !== undefined) {
      return { error: new AppError(400, 'VALIDATION_FAILED', `query parameter ${repeated} is given more than once`, { field: repeated }) };
    }
    const notNumeral = numerals.find(({ key, pattern }) => {
      const value = (data as Record<string, unknown>)[key];
      return typeof value === 'string' && !pattern.test(value);
    });
    if (notNumeral) {
      return { error: new AppError(400, 'VALIDATION_FAILED', `query parameter ${notNumeral.key} must be ${notNumeral.type}`, { field: notNumeral.key }) };
    }
    if (!validate(data)) {
      const first = pickError(validate.errors ?? []);
      // Conventions 7: an unknown or read-only key is named even when another field also fails.
      const unknown = part === 'body' && first?.keyword !== 'additionalProperties' ? unknownKeyError(schema as object, data) : undefined;
      return { error: unknown ?? toAppError(part, first) };
    }
    const bad = findUnstorableValue(data);
    if (bad === undefined) return { value: data };
    if (part === 'params') return { error: new AppError(404, 'NOT_FOUND', 'resource not found') };
    const what = bad.number ? 'must be a finite number' : 'contains a NUL character or an unpaired surrogate';
    const code = part === 'body' ? domainCodeOf(schemaAlong(schema, bad.field)) : 'VALIDATION_FAILED';
    return { error: new AppError(400, code, `${bad.field || 'the body'} ${what}`, { field: bad.field }) };
  };
};

// A query's numbers are plain decimals: ajv's coercion goes through Number(), which would read
// `0x10` as 16, `1e2` as 100 and ` 10` as 10.
const NUMERALS = { integer: /^-?\d+$/, number: /^-?\d+(\.\d+)?$/ } as const;

/** The query parameters that hold numbers, each with the pattern its text must match. */
function numeralRules(schema: unknown): Array<{ key: string; type: keyof typeof NUMERALS; pattern: RegExp }> {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.entries(properties).flatMap(([key, property]) => {
    const type = property.type;
    return type === 'integer' || type === 'number' ? [{ key, type, pattern: NUMERALS[type] }] : [];
  });
}

/** The query parameters that take one value. */
function singleValued(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.entries(properties).filter(([, property]) => property.type !== 'array').map(([key]) => key);
}

// PostgreSQL text cannot hold U+0000 (a 500 otherwise), and unpaired surrogates would be stored as U+FFFD.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The field path of the first key or string that PostgreSQL cannot store faithfully, or of the first
 * number that is not finite: JSON `1e400` and a query's `1e400` parse as Infinity, which ajv's
 * `integer` and `number` accept and JSON writes back as null. Iterative: bodies may nest deeply.
 */
export function findUnstorableValue(data: unknown): { field: string; number: boolean } | undefined {
  const stack: Array<[unknown, string]> = [[data, '']];
  while (stack.length) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) return { field: path, number: false };
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) return { field: path, number: true };
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push([item, `${path}[${i}]`]));
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (UNSTORABLE.test(key)) return { field: join(path, key.replace(UNSTORABLE, '?')), number: false };
        stack.push([item, join(path, key)]);
      }
    }
  }
  return undefined;
}

/** `/check/steps/1/selector` -> `check.steps[1].selector`. */
export function pointerToField(pointer: string): string {
  let field = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    field += /^\d+$/.test(part) ? `[${part}]` : field ? `.${part}` : part;
  }
  return field;
}

const join = (base: string, key: string): string => (base ? `${base}.${key}` : key);

/** A JSON object (not an array, not null), as a body or one of its fields may be before validation. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Without allErrors ajv stops at the first failure, except inside a union (`anyOf`), where it reports one
 * error per branch and then the union's own. Pick the branch the client meant: the one whose `const`
 * properties (a discriminator such as `type`) match the data; else report the union as a whole.
 */
export function pickError(errors: ErrorObject[]): ErrorObject | undefined {
  const last = errors.at(-1);
  if (!last || (last.keyword !== 'anyOf' && last.keyword !== 'oneOf')) return last;
  const branches = (Array.isArray(last.schema) ? last.schema : []) as unknown[];
  const errorsOf = (i: number) => errors.filter((e) => e.schemaPath.startsWith(`${last.schemaPath}/${i}/`));
  const discriminators = branches.map((b) => constProperties(b));
  const matching = branchesByConst(branches, last.data);
  if (matching.length === 1) return pickError(errorsOf(matching[0]!));

  const branchErrors = errors.slice(0, -1);
  const key = discriminators[0]?.[0]?.[0];
  if (key && isObject(last.data) && discriminators.every((d) => d.some(([k]) => k === key))) {
    if (!(key in last.data)) return { ...last, keyword: 'required', params: { missingProperty: key } };
    const values = discriminators.map((d) => d.find(([k]) => k === key)![1]);
    return { ...last, keyword: 'enum', instancePath: `${last.instancePath}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`, params: { allowedValues: values } };
  }
  if (branchErrors.length && branchErrors.every((e) => e.keyword === 'type' && e.instancePath === last.instancePath)) {
    return { ...last, keyword: 'type', params: { type: branchErrors.map((e) => String(e.params.type)).join(' or ') }, message: `must be ${branchErrors.map((e) => String(e.params.type)).join(' or ')}` };
  }
  // Scalars with constraints (e.g. a string or null): the branch whose type fits the data explains best.
  const fitting = branches.map((_, i) => i).filter((i) => errorsOf(i).some((e) => e.keyword !== 'type' || e.instancePath !== last.instancePath));
  if (fitting.length === 1) return pickError(errorsOf(fitting[0]!));
  return { ...last, message: 'does not match any of the accepted shapes' };
}

/**
 * The 422 `INVALID_JSON` naming a body's first unknown or read-only key, if it holds one: that
 * failure wins over any other (Conventions 7). Runs only on a failing body (it fills defaults in,
 * as the route's own validation would); compiled once per schema, on its first failure.
 */
export function unknownKeyError(schema: object, body: unknown): AppError | undefined {
  const validateAll = bodyAjvAllErrors.compile(schema);
  if (validateAll(body)) return undefined;
  const unknown = findUnknownKey(validateAll.errors ?? []);
  return unknown && bodyError(unknown, pointerToField(unknown.instancePath));
}

/**
 * The first unknown key among all of a body's errors. Inside a union only the branch the client meant
 * counts: a sibling branch calls every key it lacks unknown. A tagged `oneOf` evaluates only the
 * tagged branch and reports no union error, so its branch errors always count.
 */
export function findUnknownKey(errors: ErrorObject[]): ErrorObject | undefined {
  const unions = new Map(errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => [e.schemaPath, e]));
  return errors.find((e) => e.keyword === 'additionalProperties' && [...e.schemaPath.matchAll(/\/(anyOf|oneOf)\/(\d+)\//g)].every((m) => {
    const union = unions.get(`${e.schemaPath.slice(0, m.index)}/${m[1]}`);
    return !union || meantBranch(union) === Number(m[2]);
  }));
}

/** The branch of a failed union the client meant: the one its tag names, else the only one of the data's type. */
function meantBranch(union: ErrorObject): number | undefined {
  const branches = (Array.isArray(union.schema) ? union.schema : []) as unknown[];
  const byTag = branchesByConst(branches, union.data);
  if (byTag.length === 1) return byTag[0];
  const type = union.data === null ? 'null' : Array.isArray(union.data) ? 'array' : typeof union.data;
  const byType = branches.map((_, i) => i).filter((i) => {
    const declared = isObject(branches[i]) ? branches[i].type : undefined;
    return declared === type || (Array.isArray(declared) && declared.includes(type));
  });
  return byType.length === 1 ? byType[0] : undefined;
}

/** Indexes of the branches whose `const` properties (a tag such as `type`) all match the data. */
function branchesByConst(branches: unknown[], data: unknown): number[] {
  return branches.map((_, i) => i).filter((i) => {
    const consts = constProperties(branches[i]);
    return consts.length > 0 && isObject(data) && consts.every(([key, value]) => data[key] === value);
  });
}

/** `[key, value]` of every property a branch pins with `const`. */
function constProperties(schema: unknown): Array<[string, unknown]> {
  const props = isObject(schema) && isObject(schema.properties) ? schema.properties : {};
  return Object.entries(props).filter(([, p]) => isObject(p) && 'const' in p).map(([k, p]) => [k, (p as { const: unknown }).const]);
}

function toAppError(part: string, err: ErrorObject | undefined): Error {
  if (!err) return new AppError(400, 'VALIDATION_FAILED', 'invalid request');
  const at = pointerToField(err.instancePath);
  if (part === 'params') return new AppError(404, 'NOT_FOUND', 'resource not found');
  if (part === 'body') return bodyError(err, at);
  const field = part === 'querystring' && err.keyword === 'required' ? String(err.params.missingProperty) : at;
  return new AppError(400, 'VALIDATION_FAILED', `${part === 'querystring' ? 'query parameter' : 'header'} ${field || ''} ${err.message ?? 'is invalid'}`.replace(/\s+/g, ' ').trim(), { field });
}

function bodyError(err: ErrorObject, at: string): AppError {
  if (err.keyword === 'additionalProperties') {
    const key = String(err.params.additionalProperty);
    const allowed = Object.keys((err.parentSchema as { properties?: object } | undefined)?.properties ?? {});
    const field = join(at, key);
    return new AppError(422, 'INVALID_JSON', `unknown or read-only key "${field}"; ${at || 'the body'} accepts: ${allowed.join(', ') || 'no keys'}`, { field, allowed });
  }
  if (at === '' && err.keyword === 'type') {
    return new AppError(400, 'INVALID_JSON', `the body must be a JSON ${String(err.params.type)}`);
  }
  // Whole-body constraints: no one field is at fault.
  if (at === '' && (err.keyword === 'minProperties' || err.keyword === 'maxProperties')) {
    return new AppError(400, 'VALIDATION_FAILED', err.keyword === 'minProperties' ? 'send at least one field' : 'the body has too many fields');
  }
  if (err.keyword === 'discriminator') return discriminatorError(err, at);
  if (err.keyword === 'required') {
    const missing = String(err.params.missingProperty);
    const field = join(at, missing);
    const property = (err.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties?.[missing];
    return new AppError(400, domainCodeOf(property), `${field} is required`, { field });
  }
  return new AppError(400, domainCodeOf(err.parentSchema), `${at} ${describe(err)}`, { field: at });
}

/**
 * Where the spec names a code for a field's bad values (e.g. `INVALID_MANUAL_STATE`), the schema
 * carries it as `x-error-code` (an OpenAPI extension, so the document shows it too).
 */
export const ERROR_CODE_KEYWORD = 'x-error-code';

function domainCodeOf(schema: unknown): ErrorCode {
  const code = isObject(schema) ? schema[ERROR_CODE_KEYWORD] : undefined;
  return typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code) ? (code as ErrorCode) : 'VALIDATION_FAILED';
}

/**
 * The innermost schema on `field`'s path that names an error code (`x-error-code`), else the
 * field's own, through properties, records and arrays; a union on the way ends the walk.
 */
function schemaAlong(schema: unknown, field: string): unknown {
  let named: unknown;
  let at: unknown = schema;
  for (const part of field.match(/[^.[\]]+/g) ?? []) {
    if (isObject(at) && typeof at[ERROR_CODE_KEYWORD] === 'string') named = at;
    if (!isObject(at)) return named;
    const properties = isObject(at.properties) ? at.properties : {};
    const patterns = isObject(at.patternProperties) ? Object.values(at.patternProperties) : [];
    at = /^\d+$/.test(part) && at.items !== undefined ? at.items : properties[part] ?? patterns[0] ?? at.additionalProperties;
  }
  return isObject(at) && typeof at[ERROR_CODE_KEYWORD] === 'string' ? at : named;
}

/** A tagged union whose tag is missing, not a string, or names no branch. */
function discriminatorError(err: ErrorObject, at: string): AppError {
  const tag = String(err.params.tag);
  const field = join(at, tag);
  const branches = ((err.parentSchema as { oneOf?: unknown[] } | undefined)?.oneOf ?? []);
  // With no branch named, a key that no branch accepts is unknown whichever was meant (Conventions 7).
  const accepted = [...new Set(branches.flatMap((b) => Object.keys((b as { properties?: object }).properties ?? {})))];
  const unknown = isObject(err.data) ? Object.keys(err.data).find((key) => !accepted.includes(key)) : undefined;
  if (unknown !== undefined) {
    const unknownField = join(at, unknown);
    return new AppError(422, 'INVALID_JSON', `unknown key "${unknownField}": no kind accepts it; ${at || 'the body'} accepts: ${accepted.join(', ')}`, { field: unknownField, allowed: accepted });
  }
  const values = branches.flatMap((b) => constProperties(b).filter(([k]) => k === tag).map(([, v]) => JSON.stringify(v)));
  const what = err.params.tagValue === undefined ? 'is required' : `must be one of: ${values.join(', ')}`;
  return new AppError(400, 'VALIDATION_FAILED', `${field} ${what}`, { field });
}

function describe(err: ErrorObject): string {
  switch (err.keyword) {
    case 'enum': return `must be one of: ${(err.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const': return `must be ${JSON.stringify(err.params.allowedValue)}`;
    case 'propertyNames': {
      const max = (err.schema as { maxLength?: number } | undefined)?.maxLength;
      return `has a key ${JSON.stringify(String(err.params.propertyName).slice(0, 40))}${max === undefined ? ' that is not accepted' : ` longer than ${max} characters`}`;
    }
    default: return err.message ?? 'is invalid';
  }
}
