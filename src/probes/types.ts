// What every probe is: a pure function of (spec, resolved variables, guard) to a result. The
// scheduler, `POST /targets/test`, `check-now` and (later) regional agents all call probes through
// this one shape; nothing here touches the store.
import type { NetworkGuard } from '../net/guard.js';
import type { RdapBootstrap } from '../rdap/index.js';

export type ResultStatus = 'up' | 'degraded' | 'down' | 'error';

/** Per-phase milliseconds of one attempt; a phase that did not happen is absent. */
export interface PhaseTimings {
  dns?: number;
  connect?: number;
  tls?: number;
  first_byte?: number;
  transfer?: number;
}

/**
 * One check's outcome (CONTRACT.md, "Check result": status, duration_ms, error, ...kind fields).
 * `error` is a short human reason for any non-up status, null when up, with two exceptions the
 * spec sets: tls_cert always carries its JSON document there ("the result error carries a JSON
 * document"), domain_expiry carries its JSON body on non-up results. `fields` are the per-kind result fields
 * (dns: domain, record_type, answers, aliases, matched, missing, unexpected; http: status_code, ...).
 */
export interface ProbeResult {
  status: ResultStatus;
  duration_ms: number;
  error: string | null;
  timings?: PhaseTimings;
  fields?: Record<string, unknown>;
}

/** Where an http check carries a secret variable's value: never sent beyond the check's own origin. */
export interface SecretParts {
  /** Header names, lower-cased. */
  headers: ReadonlySet<string>;
  body: boolean;
  /** The secret values substituted, which its result shows as `***`. */
  values: readonly string[];
}

export interface ProbeContext {
  /** Connect-time SSRF guard: every address a probe connects to must come from it (pinnedLookup / resolveForConnect). */
  guard: NetworkGuard;
  /** Aborted when the check must stop (shutdown); each probe also enforces its own spec `timeout`. */
  signal?: AbortSignal;
  /** The RDAP bootstrap registry (domain_expiry). */
  rdap: RdapBootstrap;
  /** `checker.rdap_max_inflight`: RDAP requests in flight per TLD. */
  rdapMaxInflight?: number;
  /** Wall clock for day arithmetic (tls_cert, domain_expiry); tests pass a fixed one. */
  now?: () => Date;
  /** The parts of this check that hold a secret (http), which redirects to another origin must not carry. */
  secretParts?: SecretParts;
}

/**
 * A probe never throws for a failure of the target: refusals, timeouts, bad answers are results.
 * `spec` arrives with `{{key}}` references already substituted (variables resolved by the caller).
 */
export type Probe<S> = (spec: S, ctx: ProbeContext) => Promise<ProbeResult>;
