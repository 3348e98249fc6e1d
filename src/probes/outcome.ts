// What probes share about failing well: one timeout budget for the whole check (resolution
// included, which honours no signal), and a short human reason for whatever went wrong.
import type { ProbeResult } from './types.js';

/** `ip_version` as the guard and `net` take it. */
export const FAMILY = { any: 0, ipv4: 4, ipv6: 6 } as const;

export class CheckTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`timeout after ${timeoutMs} ms`);
    this.name = 'CheckTimeoutError';
  }
}

/**
 * One check's deadline as its probe sees it: aborted at the timeout or with the outer signal.
 * `signal`, a real AbortSignal for the APIs that take one (fetch, AbortSignal.any), is made on
 * first use: Node 20 spends about 10 µs making one, and listening on it about as much again, which
 * the http probe (most checks) does without through `onAbort`.
 */
export class Deadline {
  aborted = false;
  reason: unknown = undefined;
  private readonly listeners = new Set<(reason: unknown) => void>();
  private controller: AbortController | null = null;

  /** Calls `fn` once if the check must stop; returns what takes it back. */
  onAbort(fn: (reason: unknown) => void): () => void {
    if (this.aborted) {
      fn(this.reason);
      return () => {};
    }
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    for (const fn of this.listeners) fn(reason);
    this.listeners.clear();
    this.controller?.abort(reason);
  }
}

/**
 * Runs `run` under a deadline that aborts after `timeoutMs` or with `outer`; settles at the deadline
 * even when `run` is stuck in something that ignores it. Any throw becomes `onError`'s result.
 */
export async function withDeadline(timeoutMs: number, outer: AbortSignal | undefined,
  run: (deadline: Deadline) => Promise<ProbeResult>, onError: (err: unknown) => ProbeResult): Promise<ProbeResult> {
  const deadline = new Deadline();
  let timer: NodeJS.Timeout | undefined;
  let onOuterAbort: (() => void) | undefined;
  const expired = new Promise<never>((_, reject) => {
    const fail = (reason: unknown): void => { deadline.abort(reason); reject(reason); };
    timer = setTimeout(() => fail(new CheckTimeoutError(timeoutMs)), timeoutMs);
    if (outer?.aborted) fail(new Error('check aborted'));
    onOuterAbort = () => fail(new Error('check aborted'));
    outer?.addEventListener('abort', onOuterAbort, { once: true });
  });
  try {
    return await Promise.race([run(deadline), expired]);
  } catch (err) {
    // An abort surfaces as AbortError from whatever was in flight: report the reason behind it.
    return onError(deadline.aborted ? deadline.reason : err);
  } finally {
    clearTimeout(timer);
    // `outer` is the scheduler's one signal for every check: a listener left on it would pile up
    // (and each add walks the whole list), so every check takes its own off again.
    if (onOuterAbort) outer?.removeEventListener('abort', onOuterAbort);
    expired.catch(() => {});
  }
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'name resolution failed (temporary)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed while sending',
  HPE_INVALID_CONSTANT: 'invalid HTTP response',
};

/** `...:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/...`: the reason. */
const OPENSSL_REASON = /:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+)/;

/** A short reason for a failed check; TLS verification errors keep their code (CERT_HAS_EXPIRED...). */
export function describeError(err: unknown): string {
  if (err instanceof CheckTimeoutError) return err.message;
  const e = err as NodeJS.ErrnoException & { hostname?: string };
  if (e?.code === 'EBLOCKEDADDRESS') return e.message;
  if (e?.code && REASONS[e.code]) return e.hostname && e.code === 'ENOTFOUND' ? `${REASONS[e.code]}: ${e.hostname}` : REASONS[e.code]!;
  if (e?.code && /CERT|SELF_SIGNED|TLS|SSL|UNABLE_TO_|SIGNATURE/.test(e.code)) return `TLS: ${e.message} (${e.code})`;
  // A handshake refused mid-write carries OpenSSL's whole error line; its reason is the part that speaks.
  const openssl = e?.code === 'EPROTO' ? OPENSSL_REASON.exec(e.message ?? '') : null;
  if (openssl) return `TLS: ${openssl[1]} (EPROTO)`;
  if (e?.code?.startsWith('HPE_')) return `invalid HTTP response: ${e.message}`;
  return e?.message ? String(e.message).slice(0, 500) : String(err).slice(0, 500);
}
