// Uptime and latency answers (monitoring-api.md: `GET /targets/{id}/uptime`, `/latency`,
// `/latency/by-region`). The spec names the figures, not the shapes: these are ours, described
// in OpenAPI.
import { Type, type Static } from '@sinclair/typebox';
import { nullable } from '../http/schema-helpers.js';

const ms = (description: string) => nullable(Type.Number({ minimum: 0, description }));

export const StatsQuery = Type.Object({
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Start of the range, which is half-open: `[from, to)`; default 24 hours before `to`; raised to the oldest instant the plan\'s `retention_days` keeps readable.' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'End of the range; default now, and never later than now.' })),
  region: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only this region; default every region pooled.' })),
});

export const ByRegionQuery = Type.Omit(StatsQuery, ['region']);

const Resolution = Type.Union([Type.Literal('raw'), Type.Literal('hour'), Type.Literal('day')], {
  description: 'Where the figures come from. `raw`: the results themselves, for a range of up to two days inside `raw_days`; the edges are exact. `hour` (ranges up to 31 days within the last 35) and `day` (longer or older): the rollups, with `from` widened down to the start of its series bucket (a whole UTC hour, six hours for ranges over 7 days, or a day) and `to` up to the end of its bucket but never past now, as shown.',
});

const head = {
  target_id: Type.String({ format: 'uuid' }),
  from: Type.String({ format: 'date-time', description: 'The range the figures cover (see `resolution`).' }),
  to: Type.String({ format: 'date-time' }),
  resolution: Resolution,
};

export const LatencyStats = Type.Object({
  count: Type.Integer({ minimum: 0, description: 'Results with a latency: `up` and `degraded` results measured by a probe.' }),
  mean_ms: ms('Mean `duration_ms`.'),
  min_ms: ms('Fastest.'),
  max_ms: ms('Slowest.'),
  p50_ms: ms('Median, from a log-scale histogram: within about 2.2% of the exact value, and never outside `[min_ms, max_ms]`.'),
  p90_ms: ms('90th percentile (as `p50_ms`).'),
  p95_ms: ms('95th percentile (as `p50_ms`).'),
  p99_ms: ms('99th percentile (as `p50_ms`).'),
  phases: Type.Object({
    dns_ms: ms('Mean DNS lookup time of the results that had one.'),
    connect_ms: ms('Mean TCP connect time.'),
    tls_ms: ms('Mean TLS handshake time.'),
    first_byte_ms: ms('Mean time from request sent to the first response byte.'),
    transfer_ms: ms('Mean body transfer time.'),
  }, { additionalProperties: false }),
}, { additionalProperties: false, description: 'Null figures mean no result with a latency.' });

const LatencyPoint = Type.Composite([Type.Object({ at: Type.String({ format: 'date-time', description: 'Start of the bucket.' }) }), LatencyStats], {
  additionalProperties: false,
});

const Series = Type.Array(LatencyPoint, { description: 'Every bucket of the range, oldest first; a bucket without results has count 0 and null figures.' });

export const LatencyReport = Type.Object({
  ...head,
  region: nullable(Type.String({ description: 'The region asked for; null: every region pooled.' })),
  bucket_secs: Type.Integer({ minimum: 60, description: 'Width of a series bucket, chosen from the range: 1, 5 or 15 minutes from raw results, 1 or 6 hours from the hourly rollups, 1 day from the daily ones (and the hours not yet moved into days).' }),
  summary: LatencyStats,
  series: Series,
}, { additionalProperties: false });

export const LatencyByRegionReport = Type.Object({
  ...head,
  bucket_secs: Type.Integer({ minimum: 60 }),
  regions: Type.Array(Type.Object({ region: Type.String(), summary: LatencyStats, series: Series }, { additionalProperties: false }), {
    description: 'One entry per region that has results for this monitor, by region id.',
  }),
}, { additionalProperties: false });

const secs = (description: string) => Type.Number({ minimum: 0, description });

export const UptimeReport = Type.Object({
  ...head,
  region: nullable(Type.String({ description: 'The region asked for; null: every region, their time pooled.' })),
  uptime_pct: nullable(Type.Number({ minimum: 0, maximum: 100, description: 'Time up or degraded over time up, degraded or down, to three decimals; null until probed in the range.' })),
  up_secs: secs('Time whose latest result was `up`.'),
  degraded_secs: secs('Time whose latest result was `degraded`: it answered, so it counts as up.'),
  down_secs: secs('Time whose latest result was `down`, and the time of declared incidents naming the monitor with `counts_as_downtime`: the only time that counts against uptime.'),
  error_secs: secs('Time whose latest result was `error` (the check itself could not decide): no verdict, left out of `uptime_pct`.'),
  checks: Type.Object({
    total: Type.Integer({ minimum: 0 }), up: Type.Integer({ minimum: 0 }), degraded: Type.Integer({ minimum: 0 }),
    down: Type.Integer({ minimum: 0 }), error: Type.Integer({ minimum: 0 }),
  }, { additionalProperties: false, description: 'Results in the range by status.' }),
}, {
  additionalProperties: false,
  description: 'Time-based uptime. The time from one result to the next result of the same region counts with the earlier result\'s status, for at most three check intervals; a longer silence of a probed monitor (paused, held, unprobed) is no data and counts neither way. A heartbeat\'s verdict and a manual state stand until the next, through a pause or a hold too (such a monitor keeps its state while it is not evaluated). A result written after a later one of its region (a slow check) is placed in time like any other, unless the hourly rollups already hold that later one (they take results about a minute after they are written): then only a raw read counts it. The time since the latest result counts as it stands. With several regions their time adds up, so a region down while others are up weighs by its share. A declared incident naming the monitor with `counts_as_downtime: true` counts as down for its whole span (in every region, also where no result was), whatever the checks said; a raw read places it exactly; where a rollup bucket is only partly covered, the covered part takes its share of each status evenly. The range is kept within `retention_days`: a rollup bucket reaching past it is left out, and a range wholly older than it is empty.',
});

export type StatsQueryT = Static<typeof StatsQuery>;
export type LatencyStatsT = Static<typeof LatencyStats>;
