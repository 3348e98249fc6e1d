// Strict request validation (monitoring-api.md, Conventions 7): bodies are never coerced and never
// lose unknown keys; an unknown key is 422 INVALID_JSON naming its full path and what its object accepts.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { AppError } from '../shared/errors.js';

// ajv-formats ships CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: false,
    removeAdditional: false,
    useDefaults: true,
    coerceTypes: coerce ? 'array' : false,
    verbose: true,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const validate: ValidateFunction = (httpPart === 'body' ? bodyAjv : paramAjv).compile(schema as object);
  return (data: unknown) => (validate(data) ? { value: data } : { error: toAppError(httpPart ?? 'body', validate.errors?.[0]) });
};

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
  if (err.keyword === 'required') {
    const field = join(at, String(err.params.missingProperty));
    return new AppError(400, 'VALIDATION_FAILED', `${field} is required`, { field });
  }
  return new AppError(400, 'VALIDATION_FAILED', `${at} ${describe(err)}`, { field: at });
}

function describe(err: ErrorObject): string {
  switch (err.keyword) {
    case 'enum': return `must be one of: ${(err.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const': return `must be ${JSON.stringify(err.params.allowedValue)}`;
    default: return err.message ?? 'is invalid';
  }
}
