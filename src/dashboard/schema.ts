// The dashboard rollup (`GET /api/v1/dashboard/summary`) as a TypeBox schema.
import { Type, type Static } from '@sinclair/typebox';
import { CHECK_KINDS } from '../targets/constants.js';

export const DashboardSummary = Type.Object({
  total: Type.Integer({ minimum: 0, description: 'Targets of the org.' }),
  enabled: Type.Integer({ minimum: 0, description: 'Targets with `enabled: true`.' }),
  paused: Type.Integer({ minimum: 0, description: 'Targets with `enabled: false` (the customer\'s pause switch).' }),
  held: Type.Integer({ minimum: 0, description: 'Targets held by the service (counted whatever their `enabled`).' }),
  by_kind: Type.Object(Object.fromEntries(CHECK_KINDS.map((k) => [k, Type.Integer({ minimum: 0 })])), {
    additionalProperties: false, description: 'Targets per check kind; every kind is present, 0 when none.',
  }),
}, { additionalProperties: false, $id: 'DashboardSummary' });

export type DashboardSummaryT = Static<typeof DashboardSummary>;
