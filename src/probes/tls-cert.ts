// The tls_cert probe (monitoring-api.md, "tls_cert"): TCP to a guard-approved address, a TLS
// handshake that accepts any chain (the check is about the expiry date, not trust), and the leaf's
// not-after judged against warn_days / critical_days ("Result status mapping").
import { isIP, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { connect as tlsConnect, type PeerCertificate, type TLSSocket } from 'node:tls';
import type { Static } from '@sinclair/typebox';
import type { TlsCertCheck } from '../targets/check-specs.js';
import { connectPinned } from './connect.js';
import { describeError, FAMILY, withDeadline, type Deadline } from './outcome.js';
import type { Probe, ResultStatus } from './types.js';

export type TlsCertCheckT = Static<typeof TlsCertCheck>;

const DAY_MS = 86_400_000;

/** Whole days left, rounded down: a certificate expiring later today has 0, one expired an hour ago -1. */
export function daysRemaining(expiresAt: Date, now: Date): number {
  return Math.floor((expiresAt.getTime() - now.getTime()) / DAY_MS);
}

/** The days rows of the status table, shared by tls_cert and domain_expiry. */
export function expiryStatus(days: number, warnDays: number, criticalDays: number): ResultStatus {
  if (days < 0 || days < criticalDays) return 'down';
  if (days < warnDays) return 'degraded';
  return 'up';
}

interface CertFacts {
  days_remaining: number;
  not_after: string;
  subject_common_name: string | null;
  issuer_common_name: string | null;
}

/** SNI is a host name (RFC 6066 section 3): an IP literal sends none. */
function sniName(spec: TlsCertCheckT): string | undefined {
  const name = spec.server_name ?? spec.host;
  return isIP(name) ? undefined : name;
}

/** The TLS handshake over an already connected socket; destroys it on failure or abort. */
function handshake(socket: Socket, servername: string | undefined, deadline: Deadline): Promise<TLSSocket> {
  return new Promise<TLSSocket>((resolve, reject) => {
    const tls = tlsConnect({ socket, rejectUnauthorized: false, ...(servername !== undefined && { servername }) });
    let stopListening = (): void => {};
    const cleanup = (): void => {
      stopListening();
      tls.removeListener('error', onError);
    };
    const onError = (err: Error): void => { cleanup(); tls.destroy(); reject(err); };
    tls.once('error', onError);
    tls.once('secureConnect', () => { cleanup(); resolve(tls); });
    stopListening = deadline.onAbort((reason) => { cleanup(); tls.destroy(); reject(reason); });
  });
}

/** A subject or issuer CN; a certificate with several CNs reports the first. */
function commonName(name: PeerCertificate['subject'] | undefined): string | null {
  const cn: unknown = name?.CN;
  if (Array.isArray(cn)) return typeof cn[0] === 'string' ? cn[0] : null;
  return typeof cn === 'string' ? cn : null;
}

function certFacts(cert: PeerCertificate, now: Date): CertFacts {
  // An anonymous or PSK handshake yields an empty object: there is no date to judge.
  if (!cert.valid_to) throw new Error('the server presented no certificate');
  const notAfter = new Date(cert.valid_to);
  if (Number.isNaN(notAfter.getTime())) throw new Error(`unreadable certificate not-after "${cert.valid_to}"`);
  return {
    days_remaining: daysRemaining(notAfter, now),
    not_after: notAfter.toISOString(),
    subject_common_name: commonName(cert.subject),
    issuer_common_name: commonName(cert.issuer),
  };
}

export const tlsCertProbe: Probe<TlsCertCheckT> = async (spec, ctx) => {
  const started = performance.now();
  const elapsed = (): number => performance.now() - started;
  return withDeadline(spec.timeout, ctx.signal, async (deadline) => {
    const conn = await connectPinned(ctx.guard, { host: spec.host, port: spec.port, family: FAMILY[spec.ip_version] }, deadline);
    const tlsStart = performance.now();
    const tls = await handshake(conn.socket, sniName(spec), deadline);
    const timings = { ...conn.timings, tls: performance.now() - tlsStart };
    let facts: CertFacts;
    try {
      facts = certFacts(tls.getPeerCertificate(), ctx.now?.() ?? new Date());
    } finally {
      tls.destroy();
    }
    // The spec says the result error "carries" the document, without the "non-up" qualifier it puts
    // on domain_expiry: so it is there on every judged result, up included.
    return {
      status: expiryStatus(facts.days_remaining, spec.warn_days, spec.critical_days),
      duration_ms: elapsed(), error: JSON.stringify(facts), timings,
      fields: { ...facts, address: conn.address.address },
    };
  },
  // No certificate was read, so no days to judge. The table's only row for this is "handshake
  // failure: error", and a refused or timed-out connection, or a guard refusal, is the same to the
  // check (a handshake that could not happen): all are `error`, never `down`, which the table keeps
  // for a certificate that is expired or about to be. Reachability is what tcp monitors are for.
  (err) => ({ status: 'error', duration_ms: elapsed(), error: describeError(err) }));
};
