// The dashboard rollup (`GET /api/v1/dashboard/summary`) as a TypeBox schema.
import { Type, type Static } from '@sinclair/typebox';
import { CHECK_KINDS } from '../targets/constants.js';

/** A result's status (CONTRACT.md), or `pending` before a monitor's first result. */
export const MONITOR_STATES = ['up', 'degraded', 'down', 'error', 'pending'] as const;
export type MonitorState = (typeof MONITOR_STATES)[number];

export const DashboardSummary = Type.Object({
  total: Type.Integer({ minimum: 0, description: 'Targets of the org.' }),
  enabled: Type.Integer({ minimum: 0, description: 'Targets with `enabled: true`.' }),
  paused: Type.Integer({ minimum: 0, description: 'Targets with `enabled: false` (the customer\'s pause switch).' }),
  held: Type.Integer({ minimum: 0, description: 'Targets held by the service (counted whatever their `enabled`).' }),
  by_kind: Type.Object(Object.fromEntries(CHECK_KINDS.map((k) => [k, Type.Integer({ minimum: 0 })])), {
    additionalProperties: false, description: 'Targets per check kind; every kind is present, 0 when none.',
  }),
  by_state: Type.Object(Object.fromEntries(MONITOR_STATES.map((s) => [s, Type.Integer({ minimum: 0 })])), {
    additionalProperties: false,
    description: 'Targets per state, every state present: the status of the latest check result from any region (`up`, `degraded`, `down`, `error`), or `pending` while a monitor has none yet (a heartbeat monitor never pinged, a new probed monitor before its first check). A manual monitor is `up` from its creation. Paused and held monitors keep the state of their last result.',
  }),
}, { additionalProperties: false, $id: 'DashboardSummary' });

export type DashboardSummaryT = Static<typeof DashboardSummary>;
