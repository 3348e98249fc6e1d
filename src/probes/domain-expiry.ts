// The domain_expiry probe (monitoring-api.md, "domain_expiry"): the authoritative RDAP server from
// the bootstrap registry, `GET <base>/domain/<domain>`, the `expiration` event (RFC 9083) judged
// against warn_days / critical_days like tls_cert. The SSRF guard does not apply (spec): RDAP
// servers come from IANA's registry, not from the customer. At most `checker.rdap_max_inflight`
// requests per TLD are in flight on this node, so thousands of monitors on one TLD do not hammer
// (and get rate-limited by) its single registry.
import { performance } from 'node:perf_hooks';
import { domainToASCII } from 'node:url';
import type { Static } from '@sinclair/typebox';
import { serversFor, type RdapBootstrap } from '../rdap/index.js';
import type { DomainExpiryCheck } from '../targets/check-specs.js';
import { VERSION } from '../version.js';
import { describeError, withDeadline } from './outcome.js';
import { daysRemaining, expiryStatus } from './tls-cert.js';
import type { Probe, ProbeContext, ProbeResult } from './types.js';

export type DomainExpiryCheckT = Static<typeof DomainExpiryCheck>;

/** An RDAP domain answer is a few KiB; anything past this is not worth parsing. */
export const RDAP_BODY_LIMIT = 1024 * 1024;
/** `checker.rdap_max_inflight`'s default (config/schema.ts), for a context that does not say. */
const DEFAULT_RDAP_MAX_INFLIGHT = 4;
const USER_AGENT = `Keepwatch/${VERSION} (domain expiry check)`;

/** A failure to get an answer worth judging; its message is the result's reason. */
class RdapLookupError extends Error {}

// ---- per-TLD in-flight cap ----

/** A counting gate with a FIFO queue of waiters. */
class Slots {
  active = 0;
  readonly waiters: Array<() => void> = [];
}

/** Per bootstrap instance (one per process in production), so independent setups share no gates. */
const gates = new WeakMap<RdapBootstrap, Map<string, Slots>>();

function slotsFor(rdap: RdapBootstrap, tld: string): Slots {
  let byTld = gates.get(rdap);
  if (!byTld) gates.set(rdap, (byTld = new Map()));
  let slots = byTld.get(tld);
  if (!slots) byTld.set(tld, (slots = new Slots()));
  return slots;
}

/**
 * Takes a slot, waiting in line while the TLD is at its cap. Over the cap we wait (within the
 * check's own timeout, via `signal`) rather than fail at once: the scheduler's per-host throttle
 * already drops over-cap ticks, and an RDAP check runs at most a few times a day, so a short wait
 * gives a real answer where an instant refusal would record a spurious `error`.
 */
async function acquireSlot(slots: Slots, max: number, signal: AbortSignal): Promise<() => void> {
  signal.throwIfAborted();
  if (slots.active >= max) {
    await new Promise<void>((resolve, reject) => {
      const grant = (): void => { signal.removeEventListener('abort', onAbort); resolve(); };
      const onAbort = (): void => {
        const at = slots.waiters.indexOf(grant);
        if (at >= 0) slots.waiters.splice(at, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      slots.waiters.push(grant);
    });
  } else {
    slots.active++;
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    // A waiter inherits the slot directly, so `active` never dips below the cap while some wait.
    const next = slots.waiters.shift();
    if (next) next();
    else slots.active--;
  };
}

// ---- the RDAP request ----

/** `<base>/domain/<name>`, whether or not the registry's base URL ends with a slash (RFC 9224 says it should). */
function domainUrl(base: string, asciiDomain: string): string {
  return `${base.endsWith('/') ? base : `${base}/`}domain/${encodeURIComponent(asciiDomain)}`;
}

/** The body as text, refusing to read past RDAP_BODY_LIMIT. */
async function readBounded(res: Response): Promise<string> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > RDAP_BODY_LIMIT) throw new RdapLookupError(`RDAP answer larger than ${RDAP_BODY_LIMIT} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Asks one server; an HTTP answer other than 200 is final (the registry spoke), a network failure is not. */
async function fetchDomain(url: string, signal: AbortSignal): Promise<unknown> {
  const res = await fetch(url, { signal, redirect: 'follow', headers: { accept: 'application/rdap+json, application/json', 'user-agent': USER_AGENT } });
  if (res.status === 404) {
    await res.body?.cancel();
    throw new RdapLookupError('domain not found at its RDAP server (404)');
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new RdapLookupError(`RDAP server answered HTTP ${res.status}`);
  }
  const text = await readBounded(res);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RdapLookupError('RDAP answer is not JSON');
  }
}

/** Tries the registry's servers in the bootstrap's order (https first) until one answers. */
async function lookupDomain(servers: readonly string[], asciiDomain: string, signal: AbortSignal): Promise<unknown> {
  let lastError: unknown = new RdapLookupError('no RDAP server');
  for (const base of servers) {
    try {
      return await fetchDomain(domainUrl(base, asciiDomain), signal);
    } catch (err) {
      if (err instanceof RdapLookupError || signal.aborted) throw err;
      lastError = err;
    }
  }
  const cause = (lastError as { cause?: unknown }).cause;
  throw new RdapLookupError(`RDAP server unreachable: ${describeError(cause ?? lastError)}`);
}

// ---- reading the answer (RFC 9083) ----

interface RdapEvent { eventAction?: unknown; eventDate?: unknown }
interface RdapEntity { roles?: unknown; vcardArray?: unknown; handle?: unknown }

function expirationOf(doc: unknown): Date {
  const events = (doc as { events?: unknown } | null)?.events;
  const event = Array.isArray(events)
    ? (events as RdapEvent[]).find((e) => typeof e?.eventAction === 'string' && e.eventAction.toLowerCase() === 'expiration')
    : undefined;
  if (!event) throw new RdapLookupError('the registry publishes no expiration event for this domain');
  const date = typeof event.eventDate === 'string' ? new Date(event.eventDate) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw new RdapLookupError(`unreadable expiration date "${String(event.eventDate).slice(0, 100)}"`);
  return date;
}

/** The vCard `fn` of a jCard (RFC 7095): `["vcard", [["fn", {}, "text", "Name"], ...]]`. */
function vcardName(vcardArray: unknown): string | null {
  const props = Array.isArray(vcardArray) ? vcardArray[1] : undefined;
  if (!Array.isArray(props)) return null;
  const fn = (props as unknown[]).find((p): p is unknown[] => Array.isArray(p) && p[0] === 'fn');
  return typeof fn?.[3] === 'string' && fn[3].trim() !== '' ? fn[3] : null;
}

/** The registrar entity's name, else its handle; null when the answer names none. */
function registrarOf(doc: unknown): string | null {
  const entities = (doc as { entities?: unknown } | null)?.entities;
  if (!Array.isArray(entities)) return null;
  const registrar = (entities as RdapEntity[]).find((e) => Array.isArray(e?.roles) && e.roles.includes('registrar'));
  if (!registrar) return null;
  return vcardName(registrar.vcardArray) ?? (typeof registrar.handle === 'string' ? registrar.handle : null);
}

// ---- the probe ----

async function checkDomain(spec: DomainExpiryCheckT, ctx: ProbeContext, signal: AbortSignal, started: number): Promise<ProbeResult> {
  const asciiDomain = domainToASCII(spec.domain.trim().replace(/\.$/, '')).toLowerCase();
  if (asciiDomain === '') throw new RdapLookupError(`"${spec.domain}" is not a valid domain name`);
  const servers = serversFor(await ctx.rdap.services(), asciiDomain);
  const tld = asciiDomain.slice(asciiDomain.lastIndexOf('.') + 1);
  if (!servers) throw new RdapLookupError(`no RDAP service for .${tld} in the bootstrap registry`);
  const release = await acquireSlot(slotsFor(ctx.rdap, tld), ctx.rdapMaxInflight ?? DEFAULT_RDAP_MAX_INFLIGHT, signal);
  let doc: unknown;
  try {
    doc = await lookupDomain(servers, asciiDomain, signal);
  } finally {
    release();
  }
  const expiration = expirationOf(doc);
  const registrar = registrarOf(doc);
  const days = daysRemaining(expiration, ctx.now?.() ?? new Date());
  const status = expiryStatus(days, spec.warn_days, spec.critical_days);
  const body = { domain: spec.domain, days_remaining: days, expiration_date: expiration.toISOString(), ...(registrar !== null && { registrar }) };
  return {
    status, duration_ms: performance.now() - started,
    // Only non-up results carry the JSON body (spec); `fields` always have the values.
    error: status === 'up' ? null : JSON.stringify(body),
    fields: { ...body, registrar },
  };
}

export const domainExpiryProbe: Probe<DomainExpiryCheckT> = async (spec, ctx) => {
  const started = performance.now();
  return withDeadline(spec.timeout, ctx.signal, (deadline) => checkDomain(spec, ctx, deadline.signal, started),
    // No expiry date was read (registry down, 404, no expiration event, bad JSON, bootstrap
    // unavailable, timeout): there is nothing to judge, so `error`, never `down`, which the status
    // table keeps for a domain that is expired or close to it. Still the spec's JSON body (every
    // non-up result carries it), its dates null, with the `reason` in words.
    (err) => {
      const body = { domain: spec.domain, days_remaining: null, expiration_date: null, reason: describeError(err) };
      return { status: 'error', duration_ms: performance.now() - started, error: JSON.stringify(body), fields: { domain: spec.domain } };
    });
};
