// Check results as the API shows them (CONTRACT.md, "Check result"): the common fields, then the
// kind's own fields at the top level (http `status_code`, dns `answers`...).
import { Type, type Static } from '@sinclair/typebox';
import { listOf, Pagination } from '../http/route.js';
import { nullable } from '../http/schema-helpers.js';

const Status = Type.Union(['up', 'degraded', 'down', 'error'].map((s) => Type.Literal(s)));
const ms = Type.Number({ minimum: 0 });

export const PhaseTimingsSchema = Type.Object({
  dns: Type.Optional(ms), connect: Type.Optional(ms), tls: Type.Optional(ms), first_byte: Type.Optional(ms), transfer: Type.Optional(ms),
}, { additionalProperties: false, description: 'Milliseconds per phase of the attempt; a phase that did not happen is absent.' });

const common = {
  region: Type.String({ description: '`none` for results no probe produced (heartbeat pings, manual states).' }),
  checked_at: Type.String({ format: 'date-time', description: 'When the check started.' }),
  status: Status,
  duration_ms: Type.Integer({ minimum: 0 }),
  error: nullable(Type.String({ description: 'Why it is not up; null when up. Two kinds differ, as the spec sets: tls_cert puts its JSON document (days_remaining, not_after, subject and issuer common names) here on every judged result, up included, and a string reason on a failed handshake; domain_expiry puts its JSON body here when not up.' })),
  timings: Type.Optional(PhaseTimingsSchema),
};

export const CheckResult = Type.Object({
  id: Type.String({ format: 'uuid' }),
  target_id: Type.String({ format: 'uuid' }),
  ...common,
}, {
  $id: 'CheckResult', additionalProperties: true,
  description: 'One check in one region. The kind\'s fields follow at the top level: http `status_code`, `final_url`, `redirects`, `address`; tcp `address`; dns `domain`, `record_type`, `answers`, `aliases`, `expected_contains`, `matched`, `missing`, `unexpected`; tls_cert and domain_expiry `days_remaining` and the dates. A stored credential (`bearer_token`, a `basic_auth` password) or secret variable value of 4 characters or more that the target echoed back (into a redirect, an error) shows as `***`, as sent or percent-encoded.',
});

export const TestResult = Type.Object({
  id: Type.String({ format: 'uuid', description: 'Names this one run; nothing is stored under it.' }),
  target_id: Type.Null({ description: 'Null: a one-shot check belongs to no monitor.' }),
  ...common,
}, {
  additionalProperties: true, description: 'A one-shot check: the check result shape, not persisted.',
});

export const ListResultsQuery = Type.Object({
  ...Pagination,
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Earliest `checked_at`; clamped to the plan\'s `retention_days`.' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Latest `checked_at`, included (a list names results; the figures of `uptime` and `latency` cover `[from, to)`); default now.' })),
  region: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only this region\'s results.' })),
});

export const ResultList = listOf('results', CheckResult, { order: 'Newest first.' });

export type CheckResultT = Static<typeof CheckResult>;
export type ListResults = Static<typeof ListResultsQuery>;
