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
}, { $id: 'Incident', additionalProperties: false });

export const TimelineEntry = Type.Object({
  at: Type.String({ format: 'date-time' }),
  kind: Type.String({ description: '`opened`, `recovering`, `relapsed`, `closed`, `raised` (a manual monitor set worse), `acknowledged`, `resolved`.' }),
  message: nullable(Type.String()),
  actor_user_id: nullable(Type.String({ format: 'uuid', description: 'Who did it; null for the engine.' })),
}, { additionalProperties: false });

export const IncidentDetail = Type.Composite([Incident, Type.Object({
  timeline: Type.Array(TimelineEntry, { description: 'The internal timeline, oldest first.' }),
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
