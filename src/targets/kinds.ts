// Per-kind check rules a schema cannot state (monitoring-api.md, "Check specs", "Errors"): URL
// schemes and hosts, TLS with credentials, IP-literal families, expiry thresholds, domain forms,
// flow steps. Network reachability (SSRF, deny-lists) is network.ts; DNS forms come later.
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';
import { parseHostLiteral } from '../net/address-policy.js';
import { AppError } from '../shared/errors.js';
import type { CheckSpecT } from './check-specs.js';
import { FLOW_STEPS_MAX } from './constants.js';
import { normaliseDnsCheck, parseName } from './dns-params.js';

type Spec<K extends CheckSpecT['type']> = Extract<CheckSpecT, { type: K }>;

const invalid = (field: string, message: string): AppError => new AppError(400, 'VALIDATION_FAILED', `${field}: ${message}`, { field });

/** `scheme://authority`, slashes read as the URL parser reads them for http(s) (`\` counts as `/`). */
const WRITTEN_AUTHORITY = /^[a-z][a-z\d+.-]*:[/\\]{2}([^/\\?#]*)/i;

/**
 * The authority as written ('' when there is none). The URL parser skips an empty or missing one
 * (`http:///x`, `http:/x` read as host `x`); the spec calls that a missing host. The parser's own
 * clean-up comes first: surrounding C0 controls and spaces dropped, tabs and newlines removed.
 */
function writtenAuthority(url: string): string {
  const cleaned = url.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, '').replace(/[\t\n\r]/g, '');
  return WRITTEN_AUTHORITY.exec(cleaned)?.[1] ?? '';
}

/**
 * Parses an http(s) URL as written; a monitor's `{{key}}` references are filled in before (see
 * checks.ts `judgedCheck`). Throws 400 naming `field` for another scheme, a missing host or a password
 * (`instead` says where a credential goes, for a monitor `basic_auth`).
 */
export function parseHttpUrl(url: string, field: string, instead = 'use basic_auth, which is sealed and redacted'): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(field, 'is not a valid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalid(field, 'scheme must be http or https');
  if (parsed.hostname === '' || writtenAuthority(url) === '') throw invalid(field, 'has no host (write scheme://host/...)');
  if (parsed.port === '0') throw invalid(field, 'port must be 1..65535');
  // A URL is stored and shown as written, and the probe sends no credential from it.
  if (parsed.password !== '') throw invalid(field, `holds a password (user:password@host), which would be stored and shown in clear and never sent; ${instead}`);
  return parsed;
}

/**
 * A flow `goto` that is a path on the current page's origin. `//host/x` and `/\host` name another
 * host (and `///x` host `x`), so they are judged as URLs like any absolute one.
 */
export const isPathOnly = (url: string): boolean => /^\/(?![/\\])/.test(url);

/** A URL's host as the guard reads it: IPv6 without brackets. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

function checkIpVersion(host: string, ipVersion: string): void {
  const family = parseHostLiteral(host)?.kind;
  const clash = (ipVersion === 'ipv4' && family === 'ipv6') || (ipVersion === 'ipv6' && family === 'ipv4');
  if (clash) {
    throw new AppError(400, 'INVALID_IP_VERSION', `check.ip_version: ${ipVersion} cannot reach the address ${host}`, { field: 'check.ip_version' });
  }
}

/** A range no status can meet is a mistake, not a monitor that is always down. */
function checkExpectedStatus(expected: Spec<'http'>['expected_status']): void {
  if (expected?.kind === 'range' && expected.value.min > expected.value.max) {
    throw invalid('check.expected_status.value.min', `must not be greater than max (${expected.value.max})`);
  }
}

/**
 * Names and values Node's HTTP client would refuse when the probe sends them: refused at write
 * time instead, by the client's own checks, so the two can never disagree.
 */
function checkHeaders(headers: Spec<'http'>['headers']): void {
  for (const [name, value] of Object.entries(headers)) {
    const field = `check.headers.${name}`;
    try {
      validateHeaderName(name);
    } catch {
      throw invalid(field, 'the name must be an HTTP token (letters, digits and !#$%&\'*+-.^_`|~; no space or colon)');
    }
    if (FRAMING_HEADERS.has(name.toLowerCase())) throw invalid(field, 'the HTTP client frames the request itself; a check cannot set this header');
    checkHeaderValue(name, value, field);
  }
}

/** Headers that frame the request or its connection: set by a check, every run would hang or fail. */
const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-connection']);

function checkHeaderValue(name: string, value: string, field: string): void {
  try {
    validateHeaderValue(name, value);
  } catch {
    throw invalid(field, 'the value must not hold CR, LF, NUL or other control characters, nor characters beyond U+00FF');
  }
}

function checkHttp(check: Spec<'http'>): void {
  const url = parseHttpUrl(check.url, 'check.url');
  const hasCredentials = (check.basic_auth !== undefined && check.basic_auth !== null) || (check.bearer_token !== undefined && check.bearer_token !== null);
  if (!check.verify_tls && hasCredentials && url.protocol === 'https:') {
    throw invalid('check.verify_tls', 'must stay true when basic_auth or bearer_token is sent over https');
  }
  if (check.bearer_token != null) checkHeaderValue('authorization', `Bearer ${check.bearer_token}`, 'check.bearer_token');
  // RFC 7617: the user-id ends at the first colon, so a server would read another user and password.
  if (check.basic_auth?.[0].includes(':')) throw invalid('check.basic_auth', 'the user must not hold a colon (RFC 7617: the user ends at the first colon)');
  checkIpVersion(hostOf(url), check.ip_version);
  checkExpectedStatus(check.expected_status);
  checkHeaders(check.headers);
}

function checkHost(host: string): void {
  if (host.trim() === '') throw invalid('check.host', 'must not be empty');
}

/** SNI carries a host name (RFC 6066: never an address), as a dns name is written. */
function checkServerName(name: string | null | undefined): void {
  if (name == null) return;
  const parsed = parseName(name, false);
  if (!parsed.ok || isIPv4(name) || isIPv6(name)) throw invalid('check.server_name', 'must be a host name (SNI carries no address)');
}

function checkExpiryDays(check: { warn_days: number; critical_days: number }): void {
  if (check.warn_days <= check.critical_days) throw invalid('check.warn_days', 'must be greater than critical_days');
}

/**
 * `name.tld`: at least two labels, none empty (a trailing dot is one, as the spec reads it), a valid
 * (IDNA) domain. Stored as a dns check stores its name: trimmed, lower case, ASCII.
 */
function checkDomainExpiry(check: Spec<'domain_expiry'>): void {
  const name = check.domain.trim();
  const parsed = name.endsWith('.') ? undefined : parseName(name, false);
  if (!parsed?.ok || !parsed.value.includes('.')) throw invalid('check.domain', 'must be a domain of the form name.tld');
  check.domain = parsed.value;
  checkExpiryDays(check);
}

/**
 * Flow rules: the step cap (plan `max_flow_steps`, clamped to the engine's 30; the schema leaves the
 * count to this rule so that 31 steps answer 400 `INVALID_FLOW_PARAMS`) and at least one assertion.
 */
function checkFlow(check: Spec<'flow'>, maxFlowSteps: number | null): void {
  const cap = Math.min(maxFlowSteps ?? FLOW_STEPS_MAX, FLOW_STEPS_MAX);
  if (check.steps.length > cap) {
    throw new AppError(400, 'INVALID_FLOW_PARAMS', `check.steps: at most ${cap} steps (the plan's max_flow_steps, at most ${FLOW_STEPS_MAX})`, { field: 'check.steps' });
  }
  if (!check.steps.some((s) => s.op === 'assert_text' || s.op === 'assert_url')) {
    throw invalid('check.steps', 'needs at least one assert_text or assert_url step');
  }
  parseHttpUrl(check.start_url, 'check.start_url');
  check.steps.forEach((step, i) => {
    if (step.op === 'goto' && !isPathOnly(step.url)) parseHttpUrl(step.url, `check.steps[${i}].url`);
  });
}

/** DNS rules (dns-params.ts); the check is rewritten in place to its stored form (normalised domain, no empty expected_records). */
function checkDns(check: Spec<'dns'>): void {
  const normalised = normaliseDnsCheck(check);
  Object.assign(check, normalised);
  if (normalised.expected_records === undefined) delete check.expected_records;
}

/**
 * The check's address fields stored as a dns domain is, trimmed: `" example.com "` reached the same
 * host as `example.com` but was stored and shown as sent. In place, before any rule reads them.
 */
export function trimAddresses(check: CheckSpecT): void {
  switch (check.type) {
    case 'http': check.url = check.url.trim(); return;
    case 'tcp': case 'ping': case 'tls_cert': check.host = check.host.trim(); return;
    case 'flow': check.start_url = check.start_url.trim(); return;
    default: return undefined;
  }
}

/** Throws the first rule the check breaks (a dns check is also normalised in place). */
export function checkKindRules(check: CheckSpecT, plan: { maxFlowSteps: number | null }): void {
  switch (check.type) {
    case 'http': return checkHttp(check);
    case 'tcp': checkHost(check.host); return checkIpVersion(check.host.trim(), check.ip_version);
    case 'ping': return checkHost(check.host);
    case 'tls_cert': checkHost(check.host); checkServerName(check.server_name); checkExpiryDays(check); return checkIpVersion(check.host.trim(), check.ip_version);
    case 'domain_expiry': return checkDomainExpiry(check);
    case 'flow': return checkFlow(check, plan.maxFlowSteps);
    case 'dns': return checkDns(check);
    default: return undefined;
  }
}
