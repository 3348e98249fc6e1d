// The tcp probe (monitoring-api.md, "tcp"): up when a TCP connection to a guard-approved address
// of `host:port` is established within `timeout`; the connection is closed at once. Anything that
// stops the connection (refused, unreachable, timeout, guard refusal, name not found) is down:
// reachability is exactly what a tcp check measures.
import { performance } from 'node:perf_hooks';
import type { Static } from '@sinclair/typebox';
import type { TcpCheck } from '../targets/check-specs.js';
import { connectPinned } from './connect.js';
import { describeError, FAMILY, withDeadline } from './outcome.js';
import type { Probe } from './types.js';

export type TcpCheckT = Static<typeof TcpCheck>;

export const tcpProbe: Probe<TcpCheckT> = async (spec, ctx) => {
  const started = performance.now();
  return withDeadline(spec.timeout, ctx.signal, async (deadline) => {
    const conn = await connectPinned(ctx.guard, { host: spec.host, port: spec.port, family: FAMILY[spec.ip_version] }, deadline);
    conn.socket.destroy();
    // duration_ms is the connect time: resolution is reported apart in timings.dns.
    return { status: 'up', duration_ms: conn.timings.connect, error: null, timings: conn.timings, fields: { address: conn.address.address } };
  }, (err) => ({ status: 'down', duration_ms: performance.now() - started, error: describeError(err) }));
};
