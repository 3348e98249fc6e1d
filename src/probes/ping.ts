// The ping probe (monitoring-api.md, "ping"): one ICMP echo request per guard-approved address of
// `host` until a reply arrives; the round-trip time is duration_ms. Silence for the whole timeout
// is down (ICMP has no refusal signal); a node that cannot open an ICMP socket reports `error`.
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Static } from '@sinclair/typebox';
import type { ResolvedAddress } from '../net/guard.js';
import type { PingCheck } from '../targets/check-specs.js';
import { echoAddress, IcmpSocketError, loadIcmp, type IcmpBinding, type IcmpLoad } from './icmp.js';
import { CheckTimeoutError, describeError, withDeadline } from './outcome.js';
import type { Probe } from './types.js';

export type PingCheckT = Static<typeof PingCheck>;

export interface PingProbeOptions {
  /** The addon; tests pass a loader that fails. */
  load?: () => IcmpLoad;
  /** No raw-socket fallback: how a node without CAP_NET_RAW behaves (tests). */
  datagramOnly?: boolean;
}

interface Reply {
  address: ResolvedAddress;
  rttMs: number;
}

/**
 * Echoes the addresses in turn, each given an equal share of `budgetMs` before the next one starts
 * (a failed send moves on at once); earlier ones keep listening, so the first reply from any wins.
 * Rejects when every address failed (a socket that would not open first, else the last failure);
 * silence is left to the caller's deadline.
 */
function echoEach(binding: IcmpBinding, addresses: ResolvedAddress[], budgetMs: number, signal: AbortSignal,
  datagramOnly: boolean): Promise<Reply> {
  const done = new AbortController();
  const attemptSignal = AbortSignal.any([signal, done.signal]);
  const share = Math.max(0, budgetMs) / addresses.length;
  return new Promise<Reply>((resolve, reject) => {
    let started = 0;
    let failed = 0;
    let socketError: IcmpSocketError | undefined;
    let timer: NodeJS.Timeout | undefined;
    const settle = (finish: () => void): void => {
      if (done.signal.aborted) return;
      clearTimeout(timer);
      done.abort();
      finish();
    };
    const startNext = (): void => {
      clearTimeout(timer);
      if (done.signal.aborted || started === addresses.length) return;
      const address = addresses[started++]!;
      if (started < addresses.length) timer = setTimeout(startNext, share);
      echoAddress(binding, address, attemptSignal, { datagramOnly }).then(
        (rttMs) => settle(() => resolve({ address, rttMs })),
        (err: unknown) => {
          if (signal.aborted) return settle(() => reject(signal.reason));
          // A family the node cannot open a socket for (IPv6 off...) only matters if no other answers.
          if (err instanceof IcmpSocketError) socketError ??= err;
          if (++failed === addresses.length) return settle(() => reject(socketError ?? err));
          startNext();
        });
    };
    startNext();
  });
}

export function createPingProbe(options: PingProbeOptions = {}): Probe<PingCheckT> {
  const load = options.load ?? loadIcmp;
  const datagramOnly = options.datagramOnly ?? false;
  return async (spec, ctx) => {
    const started = performance.now();
    const elapsed = (): number => performance.now() - started;
    const icmp = load();
    if (!icmp.ok) return { status: 'error', duration_ms: 0, error: icmp.reason };
    let resolved = false;
    return withDeadline(spec.timeout, ctx.signal, async (deadline) => {
      const signal = deadline.signal;
      // Ping takes no ip_version (spec): every allowed address of either family is a candidate.
      const addresses = await ctx.guard.resolveForConnect(spec.host);
      signal.throwIfAborted();
      resolved = true;
      const dns = isIP(spec.host) ? undefined : elapsed();
      const reply = await echoEach(icmp.binding, addresses, spec.timeout - elapsed(), signal, datagramOnly);
      return {
        status: 'up', duration_ms: reply.rttMs, error: null,
        ...(dns !== undefined && { timings: { dns } }), fields: { address: reply.address.address },
      };
    }, (err) => {
      if (err instanceof IcmpSocketError) return { status: 'error', duration_ms: elapsed(), error: err.message };
      const silent = resolved && err instanceof CheckTimeoutError;
      return { status: 'down', duration_ms: elapsed(), error: silent ? `no echo reply within ${spec.timeout} ms` : describeError(err) };
    });
  };
}

export const pingProbe = createPingProbe();
