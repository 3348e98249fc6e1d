import { Type, type Static } from '@sinclair/typebox';

const Instant = Type.String({ format: 'date-time' });
const nullable = <T extends ReturnType<typeof Type.String>>(t: T, description: string) => Type.Union([t, Type.Null()], { description });

export const CadenceAdvice = Type.Object({
  kind: Type.Union([Type.Literal('too_tight'), Type.Literal('too_loose')], {
    description: '`too_tight`: the real cadence is slower than period + grace. `too_loose`: period + grace is at least 4 times the real cadence.',
  }),
  suggested_period_secs: Type.Integer({ description: 'The real cadence rounded to the nearest minute (60 s to 30 d); for `too_tight`, rounded up instead when the nearest minute plus the grace would still be shorter than the cadence, so that following the advice ends it.' }),
}, { description: 'Absent until five successes, and while the declared window fits the real cadence.' });

export const HeartbeatRecord = Type.Object({
  ping_url: Type.String({ description: '`{auth.public_base_url}/ping/{token}`; add `/success`, `/start`, `/fail` or `/{0..255}`.' }),
  pending: Type.Boolean({ description: 'True until the first ping of any signal.' }),
  first_ping_at: nullable(Instant, 'The first counted ping.'),
  created_at: Instant,
  last_ping_at: nullable(Instant, 'The last counted ping of any signal (pings while paused or held are logged, not counted).'),
  last_start_at: nullable(Instant, 'The last `/start`.'),
  last_fail_at: nullable(Instant, 'The last `/fail` or nonzero exit code.'),
  last_exit_code: Type.Union([Type.Integer({ minimum: 0, maximum: 255 }), Type.Null()], { description: 'The code of the last `/{0..255}` ping; other signals leave it.' }),
  last_failure_output: Type.Union([Type.String(), Type.Null()], { description: "The last failure's POST body (at most 4 KiB); null once its retention ends." }),
  declared_period_secs: Type.Number({ description: "The check's `period` in seconds." }),
  observed_period_secs: Type.Union([Type.Integer(), Type.Null()], { description: 'Median gap between counted successes over the last 14 days (`/start` excluded; pings while paused or held do not count); null until two successes.' }),
  cadence_advice: Type.Optional(CadenceAdvice),
  previous_url_expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'Only during a rotation overlap: when the latest replaced URL stops working (one replaced earlier stops 24 hours after its own rotation).' })),
  previous_url_last_used_at: Type.Optional(nullable(Instant, 'Only during a rotation overlap: the last ping on the replaced URL.')),
  rotated_at: nullable(Instant, 'The last rotation.'),
}, { $id: 'HeartbeatRecord' });
export type HeartbeatRecordT = Static<typeof HeartbeatRecord>;

export const RotateBody = Type.Object({
  revoke_previous_immediately: Type.Optional(Type.Boolean({ description: 'Every replaced URL (this rotation\'s and any earlier one\'s still in its 24 hours) answers 404 from this commit.' })),
}, { additionalProperties: false });
export type Rotate = Static<typeof RotateBody>;

export const PingParams = Type.Object({ token: Type.String() });
export const SignalPingParams = Type.Object({
  token: Type.String(),
  signal: Type.String({ description: '`success`, `start`, `fail` or an exit code `0`..`255`.' }),
});
