import { Type } from '@sinclair/typebox';
import { ERROR_CODE_KEYWORD } from '../http/validation.js';
import { SCOPE_ACTIONS, SCOPE_RESOURCES } from '../identity/scopes.js';
import { PLAN_IDS, PLAN_VALUE_MAX } from '../plans/catalog.js';

export const AccountParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const PlanMoveBody = Type.Object({
  plan_id: Type.String({ description: `A catalog plan: ${PLAN_IDS.join(', ')}.` }),
  reason: Type.String({ minLength: 1, maxLength: 500 }),
  fallback_plan_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Plan the account falls back to when a paid subscription ends. Omitted keeps the one named before; null clears it (the plan held before paying).' })),
}, { additionalProperties: false });

export const OverridesBody = Type.Object({
  caps: Type.Record(Type.String(), Type.Unknown(), {
    [ERROR_CODE_KEYWORD]: 'PLAN_OVERRIDE_INVALID',
    description: `Plan column -> whole number, 0..${PLAN_VALUE_MAX}. Replaces every earlier override; may lower as well as raise. 0 is taken as written: a cap of 0 admits none, and a rate budget of 0 (\`api_reads_per_minute\`, ...) answers every such request 429 \`RATE_LIMITED\` until the override is cleared or expires, which is how an operator suspends an account's API use. Missing, or not an object: 400 \`PLAN_OVERRIDE_INVALID\`.`,
  }),
  reason: Type.String({ minLength: 1, maxLength: 500 }),
  expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
}, { additionalProperties: false });

export const ClearOverridesQuery = Type.Object({
  reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
});

export const AccountPlanResult = Type.Object({
  account_id: Type.String(),
  plan_id: Type.String(),
  fallback_plan_id: Type.Union([Type.String(), Type.Null()]),
  overrides: Type.Union([Type.Object({
    caps: Type.Record(Type.String(), Type.Integer()),
    reason: Type.String(),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  }), Type.Null()]),
  held: Type.Integer({ description: 'Rows newly held by this change.' }),
  released: Type.Integer({ description: 'Rows released by this change.' }),
});

export const CreateUserBody = Type.Object({
  email: Type.String({ format: 'email', maxLength: 254 }),
  plan_id: Type.Optional(Type.String({ description: "Defaults to the install's `default_plan`." })),
  org_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Defaults to the local part of the email.' })),
}, { additionalProperties: false });

export const CreatedUser = Type.Object({ user_id: Type.String(), account_id: Type.String(), org_id: Type.String(), org_slug: Type.String() });

export const CreateTokenBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  scopes: Type.Array(Type.String({ maxLength: 64 }), {
    maxItems: 64,
    description: `\`resource:action\` strings (resources ${SCOPE_RESOURCES.join(', ')}; actions ${SCOPE_ACTIONS.join(', ')}) or \`full_access\`. Unknown strings are kept and ignored.`,
  }),
  org_id: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'Bind the token to one org the user belongs to.' })),
  expires_in_days: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 365 }), Type.Null()])),
}, { additionalProperties: false });

export const CreatedToken = Type.Object({
  id: Type.String(),
  prefix: Type.String(),
  token: Type.String({ description: 'Shown once; store it now.' }),
  scopes: Type.Array(Type.String()),
  org_id: Type.Union([Type.String(), Type.Null()]),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export const UserParams = Type.Object({ user_id: Type.String({ format: 'uuid' }) });

export const CreateAgentBody = Type.Object({
  region_id: Type.String(),
  name: Type.String({ minLength: 1, maxLength: 100 }),
}, { additionalProperties: false });

export const Agent = Type.Object({
  id: Type.String(),
  region_id: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  last_seen_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

export const CreatedAgent = Type.Object({ id: Type.String(), region_id: Type.String(), token: Type.String({ description: '`sm_agent_...`, shown once.' }) });
