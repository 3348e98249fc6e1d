import { Type, type Static } from '@sinclair/typebox';
import { listOf, Pagination } from '../http/route.js';
import { ERROR_CODE_KEYWORD } from '../http/validation.js';

/** service-api.md, "Variable". Checked by the service (400 `INVALID_VARIABLE_KEY`), not by the body schema. */
export const VARIABLE_KEY_PATTERN = '^[a-z][a-z0-9_]{0,62}$';
export const VARIABLE_KEY_RE = new RegExp(VARIABLE_KEY_PATTERN);
/** Longest value accepted, in characters (a value ends up in a URL, a header or a body). */
export const VARIABLE_VALUE_MAX_LENGTH = 4096;

const Value = Type.String({
  maxLength: VARIABLE_VALUE_MAX_LENGTH,
  description: `At most ${VARIABLE_VALUE_MAX_LENGTH} characters. For a secret: sealed at rest and write-only.`,
});

export const Variable = Type.Object({
  id: Type.String({ format: 'uuid' }),
  key: Type.String({ description: `Matches \`${VARIABLE_KEY_PATTERN}\`; unique in the org. Referenced by monitors as \`{{key}}\`.` }),
  is_secret: Type.Boolean({ description: 'Fixed at create.' }),
  value: Type.Union([Type.String(), Type.Null()], { description: '`null` on every read of a secret, including the create and rotate responses.' }),
  used_by: Type.Integer({ minimum: 0, description: 'How many monitors reference the variable.' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, { $id: 'Variable', additionalProperties: false, description: 'An org variable, referenced by monitors as `{{key}}`.' });

export const CreateVariableBody = Type.Object({
  key: Type.String({ [ERROR_CODE_KEYWORD]: 'INVALID_VARIABLE_KEY', description: `Must match \`${VARIABLE_KEY_PATTERN}\`; missing, not a string or not matching is 400 \`INVALID_VARIABLE_KEY\`; a key the org already has is 409 \`VARIABLE_KEY_EXISTS\`.` }),
  is_secret: Type.Optional(Type.Boolean({ default: false, description: 'Default false; cannot be changed later.' })),
  value: Value,
}, { additionalProperties: false });

export const RotateVariableBody = Type.Object({ value: Value }, { additionalProperties: false });

export const ListVariablesQuery = Type.Object(Pagination);

export const VariableList = listOf('variables', Variable, { order: 'Ordered by key.' });

export type VariableT = Static<typeof Variable>;
export type CreateVariable = Static<typeof CreateVariableBody>;
export type RotateVariable = Static<typeof RotateVariableBody>;
