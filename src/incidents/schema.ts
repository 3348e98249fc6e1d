// Incidents on the wire (CONTRACT.md incident paths; monitoring-api.md "Incident"). The spec leaves
// the state names and most fields open: these are ours, described in OpenAPI.
import { Type, type Static } from '@sinclair/typebox';
import { listOf, Pagination } from '../http/route.js';
import { nullable } from '../http/schema-helpers.js';

const at = (description: string) => nullable(Type.String({ format: 'date-time', description }));

export const Incident = Type.Object({
  id: Type.String({ format: 'uuid' }),
  source: Type.Union([Type.Literal('monitor'), Type.Literal('declared')], { description: '`monitor`: opened by the engine; `declared`: by a person.' }),
  status: Type.Union([Type.Literal('open'), Type.Literal('resolved')], { description: '`open` until the monitor recovers or someone resolves it.' }),
  target_id: nullable(Type.String({ format: 'uuid', description: 'The monitor of a monitor incident; null once that monitor is deleted.' })),
  title: nullable(Type.String()),
  public_title: nullable(Type.String()),
  public_description: nullable(Type.String()),
  severity: nullable(Type.String()),
  impact: Type.Union([Type.Literal('degraded'), Type.Literal('partial_outage'), Type.Literal('major_outage')], {
    description: '`major_outage` when every region of the monitor confirmed it down, `partial_outage` when only some (as many as `region_policy` asks), `degraded` for a manual monitor set degraded.',
  }),
  counts_as_downtime: Type.Boolean(),
  cause: nullable(Type.String({ description: 'The failing check\'s error when it opened; a manual monitor\'s latest note.' })),
  started_at: Type.String({ format: 'date-time', description: 'The first failing check of the streak that opened it.' }),
  ended_at: at('When the final recovery began (or when it was resolved by hand); null while open.'),
  recovering_since: at('Set while a recovery waits out `recovery_period_secs`: paging pauses and status pages show the monitor up.'),
  recovered: Type.Array(Type.Object({ from: Type.String({ format: 'date-time' }), until: Type.String({ format: 'date-time' }) }, { additionalProperties: false }), {
    description: 'Recoveries a confirmed failure cut short, oldest first; uptime leaves these stretches out.',
  }),
  acknowledged_at: at('When someone acknowledged it; reminders stop.'),
  acknowledged_by: nullable(Type.String({ format: 'uuid' })),
  resolved_at: at('When someone resolved it by hand; null when the monitor\'s recovery closed it.'),
  resolved_by: nullable(Type.String({ format: 'uuid' })),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, {
  $id: 'Incident', additionalProperties: false,
  description: 'A monitor incident opens after `alert_confirmations` consecutive `down` results in as many regions as `region_policy` asks (clamped to the monitor\'s regions that are enabled; a region removed from the monitor or disabled counts no more). `degraded` counts as the target answering (it passes, except on a manual monitor set degraded by hand); `error` (the check itself could not decide) neither fails nor passes, so it neither confirms an outage nor a recovery. It starts recovering once too few regions could still be failing after as many passing checks, and closes when the recovery has lasted `recovery_period_secs`, dated to when that recovery began. Heartbeat and manual verdicts confirm at once; a heartbeat\'s recovery waits `recovery_period_secs` (closed by the clock, as no result comes while it stays up), a manual one closes at once. No incident opens, and no opened or reminder notification goes, for a monitor under a maintenance window with `suppress_alerts`; a recovery during the window still reaches the channels the incident paged before it, so the alert they raised closes; one still failing when the window ends opens with its next failure, dated no earlier than the window\'s end. The engine\'s opens and closes are audited as `incident.opened` and `incident.closed` by the system actor `incident-engine`.',
});

export const TimelineEntry = Type.Object({
  at: Type.String({ format: 'date-time' }),
  kind: Type.String({ description: 'The engine\'s `opened`, `recovering`, `relapsed`, `closed`, `raised` (a manual monitor set worse); a person\'s `declared`, `acknowledged`, `resolved`, `narrated` (narration fields edited) and `update_posted` (a public update).' }),
  message: nullable(Type.String()),
  actor_user_id: nullable(Type.String({ format: 'uuid', description: 'Who did it; null for the engine.' })),
}, { additionalProperties: false });

export const IncidentUpdate = Type.Object({
  id: Type.String({ format: 'uuid' }),
  phase: Type.String(),
  message: Type.String(),
  created_by: nullable(Type.String({ format: 'uuid' })),
  created_at: Type.String({ format: 'date-time' }),
}, { additionalProperties: false });

export const IncidentDetail = Type.Composite([Incident, Type.Object({
  target_ids: Type.Array(Type.String({ format: 'uuid' }), { description: 'The monitors it concerns: a monitor incident\'s own, or those a declared one names.' }),
  timeline: Type.Array(TimelineEntry, { description: 'The internal timeline, oldest first.' }),
  updates: Type.Array(IncidentUpdate, { description: 'Public updates, oldest first.' }),
})], { additionalProperties: false });

export const ListIncidentsQuery = Type.Object({
  ...Pagination,
  status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('resolved'), Type.Literal('all')], { description: 'Default `all`.' })),
  target_id: Type.Optional(Type.String({ format: 'uuid', description: 'Only this monitor\'s incidents.' })),
});

export const IncidentList = listOf('incidents', Incident, { order: 'Latest start first.' });

export type IncidentT = Static<typeof Incident>;
export type ListIncidents = Static<typeof ListIncidentsQuery>;

export const TargetIncidentsQuery = Type.Object({
  ...Pagination,
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Periods that end after this (or are ongoing); raised to the plan\'s `retention_days`.' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Periods that start before this; default now.' })),
  ongoing_only: Type.Optional(Type.Boolean({ description: 'Only the period still open.' })),
});

export const IncidentPeriod = Type.Object({
  started_at: Type.String({ format: 'date-time' }),
  ended_at: nullable(Type.String({ format: 'date-time', description: 'Null while ongoing.' })),
  ongoing: Type.Boolean(),
  impact: Incident.properties.impact,
  incident_ids: Type.Array(Type.String({ format: 'uuid' }), { description: 'The incidents merged into this period, oldest first.' }),
}, { additionalProperties: false, description: 'Overlapping incidents of the monitor merged into one period, at the worst impact among them.' });

export const IncidentPeriodList = listOf('incidents', IncidentPeriod, { order: 'Latest start first.', total: 'Periods in the range.' });

export type TargetIncidents = Static<typeof TargetIncidentsQuery>;

export const SEVERITIES = ['critical', 'major', 'minor'] as const;
export const UPDATE_PHASES = ['investigating', 'identified', 'monitoring', 'resolved', 'postmortem'] as const;
export const INCIDENT_UPDATE_MAX_CHARS = 2000;
export const INCIDENT_TARGETS_MAX = 1000;

const Severity = Type.Union(SEVERITIES.map((s) => Type.Literal(s)), {
  description: '`critical`, `major` or `minor`. A declared incident\'s impact follows it: `major_outage`, `partial_outage`, `degraded`; clearing it (JSON `null`) leaves the impact it last set.',
});
const Title = Type.String({ minLength: 1, maxLength: 200, description: '1-200 characters, trimmed.' });

export const DeclareIncidentBody = Type.Object({
  title: Title,
  severity: Severity,
  target_ids: Type.Optional(Type.Array(Type.String(), { maxItems: INCIDENT_TARGETS_MAX, description: `Monitors of the org it concerns (at most ${INCIDENT_TARGETS_MAX}, no duplicates; 400 \`VALIDATION_FAILED\` naming \`target_ids[i]\`).` })),
  counts_as_downtime: Type.Optional(Type.Boolean({ description: 'Default false: a declared incident counts against uptime only when it says so.' })),
}, { additionalProperties: false });

export const PatchIncidentBody = Type.Object({
  title: Type.Optional(nullable(Title)),
  public_title: Type.Optional(nullable(Type.String({ maxLength: 200 }))),
  public_description: Type.Optional(nullable(Type.String({ maxLength: 5000 }))),
  severity: Type.Optional(nullable(Severity)),
  counts_as_downtime: Type.Optional(nullable(Type.Boolean({ description: 'Declared incidents only (null clears it to the default, false): on a monitor incident 422 `VALIDATION_FAILED`.' }))),
}, { additionalProperties: false, description: 'JSON `null` clears a field; an omitted field is left alone; a declared incident\'s `title` cannot be cleared (400 `VALIDATION_FAILED`).' });

export const PostIncidentUpdateBody = Type.Object({
  phase: Type.Union(UPDATE_PHASES.map((p) => Type.Literal(p)), { description: '`resolved` on an open incident also resolves it, as `POST /incidents/{id}/resolve` does.' }),
  message: Type.String({ minLength: 1, maxLength: INCIDENT_UPDATE_MAX_CHARS, description: `1-${INCIDENT_UPDATE_MAX_CHARS} characters.` }),
}, { additionalProperties: false });



export type DeclareIncident = Static<typeof DeclareIncidentBody>;
export type PatchIncident = Static<typeof PatchIncidentBody>;
export type PostIncidentUpdate = Static<typeof PostIncidentUpdateBody>;
