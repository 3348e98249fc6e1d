// The Target resource (monitoring-api.md, "Target (monitor)", "Alert config") as TypeBox schemas:
// one each for the response, create and PATCH bodies, the list query and envelope, and regions.
// Rules the schemas cannot state (tags after trimming, alert bounds with their own error code,
// kind rules, intervals, regions) live in rules.ts, intervals.ts and regions.ts. A bound the spec
// answers with its own code (an interval below the floor, an alert bound, an unknown channel) is
// left to that rule: a schema bound here would pre-empt it with a generic VALIDATION_FAILED.
import { Type, type Static } from '@sinclair/typebox';
import { listOf, Pagination } from '../http/route.js';
import { nullable } from '../http/schema-helpers.js';
import { WriteSourceSchema } from '../http/write-source.js';
import { PublicRegion } from '../regions/schema.js';
import { CheckSpec } from './check-specs.js';
import {
  ALERT_CONFIRMATIONS_MAX, DEFAULT_ALERT_CONFIRMATIONS, DEFAULT_REGION_POLICY, DEFAULT_RENOTIFY_INTERVAL_SECS, GROUP_NAME_MAX_LENGTH,
  INTERVAL_MAX_SECS, RECOVERY_PERIOD_MAX_SECS, RENOTIFY_MAX_SECS, RENOTIFY_MIN_SECS, TAG_MAX_LENGTH, TAGS_MAX,
} from './constants.js';


/** Longest display name accepted. */
export const TARGET_NAME_MAX_LENGTH = 200;
/** A target's (or a copy's) name; the blank rule is rules.ts `targetName`. */
export const TargetName = Type.String({
  minLength: 1, maxLength: TARGET_NAME_MAX_LENGTH,
  description: `Display name, 1..${TARGET_NAME_MAX_LENGTH} characters, stored trimmed; one made only of whitespace is 400 \`VALIDATION_FAILED\` naming \`name\`.`,
});
/** Items accepted in a `tags` body before trimming and de-duplication (the 50 applies after). */
const TAGS_BODY_MAX = 1000;

export const RegionPolicy = Type.Union([
  Type.Literal('any'), Type.Literal('majority'), Type.Literal('all'),
  Type.Object({ count: Type.Integer({ description: 'At least 1 and at most the enabled regions, else 422 `INVALID_REGION_POLICY`.' }) }, { additionalProperties: false }),
], { description: `How many regions must agree the target is down before an incident opens; default \`${DEFAULT_REGION_POLICY}\`. Heartbeat and manual monitors run in no region: their verdict alone decides.` });

export const AlertBinding = Type.Object({
  channel_id: Type.String({ description: 'A notification channel of the same org. An unknown, foreign or malformed id, or a duplicate, is 400 `INVALID_ALERT_CONFIG`.' }),
}, { additionalProperties: false });

const fields = {
  name: TargetName,
  check: CheckSpec,
  interval: Type.Integer({ maximum: INTERVAL_MAX_SECS, description: `Seconds between ticks, at most ${INTERVAL_MAX_SECS} (31 days). Below max(plan \`min_check_interval_secs\`, kind floor), zero and negative values included, is 422 \`MIN_CHECK_INTERVAL\`; a manual monitor takes exactly 60, any other value is 400 \`INVALID_INTERVAL\`. Default per kind: 86400 domain_expiry, 43200 tls_cert, exactly 60 manual, the heartbeat cadence for heartbeat, max(60, floor) otherwise.` }),
  enabled: Type.Boolean({ description: "The customer's pause switch; default true." }),
  tags: Type.Array(Type.String({ maxLength: 1024 }), { maxItems: TAGS_BODY_MAX, description: `Trimmed, put in Unicode NFC and de-duplicated, then at most ${TAGS_MAX}, each at most ${TAG_MAX_LENGTH} characters; no blank, control or invisible characters.` }),
  regions: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 1000, description: 'Enabled region ids; omitted means the default-selected set under the plan cap. None on heartbeat and manual monitors; every other kind needs at least one (`[]` is 422 `REGION_INVALID`).' }),
  group_name: nullable(Type.String({ maxLength: GROUP_NAME_MAX_LENGTH, description: `At most ${GROUP_NAME_MAX_LENGTH} characters; stored trimmed; null, or nothing left after trimming, clears.` })),
  owner_user_id: nullable(Type.String({ format: 'uuid', description: 'A member of the org; the caller when left out on create; null leaves it unowned.' })),
  alerts: Type.Array(AlertBinding, { maxItems: 1000, description: 'Channel bindings; empty means no channel alerting.' }),
  alert_confirmations: Type.Integer({ description: `1..${ALERT_CONFIRMATIONS_MAX} (the ceiling is the stored integer's; the spec sets none); default ${DEFAULT_ALERT_CONFIRMATIONS} (manual monitors: always 1). Outside, 400 \`INVALID_ALERT_CONFIG\`. A heartbeat monitor stores it but confirms at once: it writes one result per verdict change, so a second failing result in a row never comes.` }),
  notify_recovery: Type.Boolean({ description: 'Default true; false makes recovery silent.' }),
  renotify_interval_secs: Type.Integer({ description: `0 (off) or ${RENOTIFY_MIN_SECS}..${RENOTIFY_MAX_SECS} (the ceiling is the stored integer's; the spec sets none); default ${DEFAULT_RENOTIFY_INTERVAL_SECS}. Otherwise 400 \`INVALID_ALERT_CONFIG\`. No reminder goes while the monitor is paused, held by its plan, or under a maintenance window that suppresses alerts; one due meanwhile goes when that ends.` }),
  recovery_period_secs: Type.Integer({ description: `0..${RECOVERY_PERIOD_MAX_SECS}, else 400 \`INVALID_ALERT_CONFIG\`; default 180 for http, tcp, ping, dns, flow and 0 for the others; manual accepts only 0.` }),
  region_policy: RegionPolicy,
};


export const Target = Type.Object({
  id: Type.String({ format: 'uuid' }),
  ...fields,
  tags: Type.Array(Type.String()),
  regions: Type.Array(Type.String()),
  group_name: nullable(Type.String()),
  owner_user_id: nullable(Type.String({ format: 'uuid' })),
  alerts: Type.Array(AlertBinding),
  alert_confirmations: Type.Integer(),
  renotify_interval_secs: Type.Integer(),
  recovery_period_secs: Type.Integer(),
  write_source: WriteSourceSchema,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, { $id: 'Target', additionalProperties: false, description: 'A monitor. Stored `basic_auth`, `bearer_token` and flow `fill` values read back as `***`.' });

const optionalFields = Type.Partial(Type.Object(fields)).properties;

export const CreateTargetBody = Type.Object({ ...optionalFields, name: fields.name, check: fields.check }, { additionalProperties: false });

export const PatchTargetBody = Type.Partial(Type.Object(fields), {
  additionalProperties: false,
  description: 'Only the fields sent change. A `check` replaces the stored one whole and keeps its `type`; leave `check` out to keep stored credentials.',
});

export const ListTargetsQuery = Type.Object({
  ...Pagination,
  tag: Type.Optional(Type.String({ maxLength: 1024, description: 'Exact tag.' })),
  enabled: Type.Optional(Type.Boolean()),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring of the name.' })),
});

export const TargetList = listOf('targets', Target, { order: 'Oldest first.' });

export const PutRegionsBody = Type.Object({
  regions: Type.Array(fields.regions.items, { maxItems: fields.regions.maxItems, description: 'The whole set, replacing the one stored: enabled region ids, at least one (`[]` is 422 `REGION_INVALID`); heartbeat and manual monitors take only `[]`.' }),
}, { additionalProperties: false });
export const TargetRegions = Type.Object({ regions: Type.Array(PublicRegion) });

export type TargetT = Static<typeof Target>;
export type CreateTarget = Static<typeof CreateTargetBody>;
export type PatchTarget = Static<typeof PatchTargetBody>;
export type RegionPolicyT = Static<typeof RegionPolicy>;
