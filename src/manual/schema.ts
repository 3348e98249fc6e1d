import { Type, type Static } from '@sinclair/typebox';
import { ERROR_CODE_KEYWORD } from '../http/validation.js';

export const MANUAL_STATUSES = ['up', 'degraded', 'down'] as const;
export type ManualStatus = (typeof MANUAL_STATUSES)[number];
export const MANUAL_NOTE_MAX = 200;

// Bad values are the spec's 400 INVALID_MANUAL_STATE, not the generic validation code.
const invalidState = { [ERROR_CODE_KEYWORD]: 'INVALID_MANUAL_STATE' };

export const ManualState = Type.Object({
  status: Type.Union(MANUAL_STATUSES.map((s) => Type.Literal(s))),
  note: Type.Union([Type.String(), Type.Null()]),
  set_at: Type.String({ format: 'date-time', description: 'The creation time until the first set.' }),
  set_by: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'The user who set it; null before the first set and once that user is purged.' }),
}, { $id: 'ManualState' });
export type ManualStateT = Static<typeof ManualState>;

export const PutManualStateBody = Type.Object({
  status: Type.Union(MANUAL_STATUSES.map((s) => Type.Literal(s)), { ...invalidState, description: '`up`, `degraded` or `down`.' }),
  note: Type.Optional(Type.Union([
    Type.String({ maxLength: MANUAL_NOTE_MAX, pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*$', ...invalidState }),
    Type.Null(),
  ], { ...invalidState, description: `One line, at most ${MANUAL_NOTE_MAX} characters; replaces the previous note (omitted or null clears it).` })),
}, { additionalProperties: false });
export type PutManualState = Static<typeof PutManualStateBody>;
