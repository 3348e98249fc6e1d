// The nine check specs (monitoring-api.md, "Check specs") as TypeBox schemas: they validate create,
// PATCH, bulk, duplicate and test bodies alike, fill defaults, and document the API.
// Rules a schema cannot state (cross-field rules, DNS forms, SSRF) live in the checks' validators.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { discriminated } from '../http/schema-helpers.js';
import { ERROR_CODE_KEYWORD } from '../http/validation.js';
import {
  DNS_RECORD_TYPES, type DnsRecordType, EXPECTED_RECORD_MAX_LENGTH, EXPECTED_RECORDS_MAX, EXPIRY_DAYS, FLOW_STEP_TIMEOUT_MS, FLOW_STEPS_MAX,
  FLOW_TIMEOUT_MS, HEARTBEAT_MAX_MS, HEARTBEAT_PERIOD_MIN_MS, HTTP_METHODS, IP_VERSIONS,
} from './constants.js';

const strict = { additionalProperties: false } as const;
/** An http check's own headers: more, or longer names, serve no check and cost every read of the monitor. */
export const HEADERS_MAX = 100;
export const HEADER_NAME_MAX = 256;
/** An optional field a response shows as `null` when unset: one shape whether a client sent `null` or nothing. */
const unsetIsNull = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()], { default: null }));
const timeout = (fallback: number, max = 60_000) =>
  Type.Integer({ minimum: 1, maximum: max, default: fallback, description: `Milliseconds; default ${fallback}.` });
const ipVersion = Type.Union(IP_VERSIONS.map((v) => Type.Literal(v)), { default: 'any', description: 'Address family to connect over.' });
const port = (description: string, fallback?: number) =>
  Type.Integer({ minimum: 1, maximum: 65535, description, ...(fallback !== undefined && { default: fallback }) });
const host = Type.String({ minLength: 1, maxLength: 253, description: 'Host name or IP address.' });
const days = (fallback: number, what: string) =>
  Type.Integer({ minimum: EXPIRY_DAYS.min, maximum: EXPIRY_DAYS.max, default: fallback, description: `${what}; 1..365, default ${fallback}.` });

export const ExpectedStatus = discriminated('kind', [
  Type.Object({ kind: Type.Literal('exact'), value: Type.Integer({ minimum: 100, maximum: 599 }) }, strict),
  Type.Object({ kind: Type.Literal('range'), value: Type.Object({ min: Type.Integer({ minimum: 100, maximum: 599 }), max: Type.Integer({ minimum: 100, maximum: 599 }) }, {
    ...strict, description: 'Inclusive bounds; `min` greater than `max` is 400 `VALIDATION_FAILED` naming `check.expected_status.value.min`.',
  }) }, strict),
  Type.Object({ kind: Type.Literal('one_of'), value: Type.Array(Type.Integer({ minimum: 100, maximum: 599 }), { minItems: 1, maxItems: 50, uniqueItems: true }) }, strict),
], { description: 'Accepted response statuses, each 100..599; default `{kind: range, value: {min: 200, max: 399}}`. A range whose `min` is greater than its `max` is 400 `VALIDATION_FAILED` naming `check.expected_status.value.min`. A 429 or 503 it accepts (a range included: the default holds neither) is up, not degraded; a redirect is the answer rather than a hop only when `exact` or `one_of` names it (the default range holds every 3xx).' });

export const DEFAULT_EXPECTED_STATUS = { kind: 'range', value: { min: 200, max: 399 } } as const;

export const HttpCheck = Type.Object({
  type: Type.Literal('http'),
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'http or https URL; may hold `{{key}}` references to plain (non-secret) variables, its scheme and host included. A write judges the URL with the references filled in by their current values (scheme, host, blocked ranges, deny-lists); an unknown key or a secret is 422 `UNRESOLVED_VARIABLE`. A later rotation is judged when the check runs. The host is judged as written: an empty authority (`http:///x`, `http:/x`, which URL parsers read as host `x`) is a missing host, 400 `VALIDATION_FAILED` naming `check.url`; so is a password in it (`user:password@`), which would be stored in clear and is never sent: use `basic_auth`.' }),
  method: Type.Union(HTTP_METHODS.map((m) => Type.Literal(m)), { default: 'GET' }),
  timeout: { ...timeout(10_000), description: 'Milliseconds; default 10000. One budget for the whole check: resolution, every redirect hop, and the answer up to its status line and headers, or up to the body match when `expected_body_contains` is set. Without a body match the body is not waited for (a status is the answer), so a slow body is not down and `timings.transfer` is only what arrived with the headers.' },
  follow_redirects: Type.Boolean({ default: true, description: 'Follow 301, 302, 303, 307 and 308, each hop judged by the network guard again. A hop to another origin (scheme, host, port) gets no `Authorization` (basic, bearer or a header), `Cookie`, `Proxy-Authorization`, nor any header holding a secret variable; a 307 or 308 there whose body holds a secret is not followed (the result is down, saying why).' }),
  max_redirects: Type.Integer({ minimum: 0, maximum: 20, default: 5 }),
  expected_status: Type.Optional({ ...ExpectedStatus, default: DEFAULT_EXPECTED_STATUS }),
  expected_body_contains: unsetIsNull(Type.String({ minLength: 1, maxLength: 1024, description: 'Substring the body must hold, searched in its first 1 MiB (1,048,576 bytes, UTF-8); past that the check is down, saying so.' })),
  headers: Type.Record(Type.String({ minLength: 1, maxLength: HEADER_NAME_MAX }), Type.String({ maxLength: 8192 }), {
    default: {}, maxProperties: HEADERS_MAX, propertyNames: { maxLength: HEADER_NAME_MAX },
    description: `Request headers, at most ${HEADERS_MAX}, names at most ${HEADER_NAME_MAX} characters, values 8192; \`Host\` may be set (a virtual host), the framing headers (\`Content-Length\`, \`Transfer-Encoding\`, \`Connection\`, \`Keep-Alive\`, \`Upgrade\`, \`TE\`, \`Trailer\`) are the client's own and refused. Values may reference variables, secret ones included. A name must be an HTTP token (no space, colon or control character) and a value must hold no CR, LF, NUL or other control character (tab aside) nor a character beyond U+00FF, as the HTTP client checks when sending; otherwise 400 \`VALIDATION_FAILED\` naming \`check.headers.<name>\` (\`headers.<name>\` on \`POST /api/v1/targets/test\`).`,
  }),
  body: unsetIsNull(Type.String({ maxLength: 65_536 })),
  verify_tls: Type.Boolean({ default: true }),
  basic_auth: unsetIsNull(Type.Tuple([Type.String({ maxLength: 1024 }), Type.String({ maxLength: 1024 })], { description: '[user, password]; redacted as `***` in responses.' })),
  bearer_token: unsetIsNull(Type.String({ minLength: 1, maxLength: 8192, description: 'Redacted as `***` in responses.' })),
  ip_version: ipVersion,
}, { ...strict, title: 'HttpCheck' });

export const TcpCheck = Type.Object({
  type: Type.Literal('tcp'),
  host,
  port: port('TCP port; 0 is refused.'),
  timeout: timeout(5_000),
  ip_version: ipVersion,
}, { ...strict, title: 'TcpCheck' });

export const PingCheck = Type.Object({
  type: Type.Literal('ping'),
  host,
  timeout: timeout(5_000),
}, { ...strict, title: 'PingCheck' });

/** "DNS parameter violations" are 400 INVALID_DNS_PARAMS (monitoring-api.md, "Errors"), also where the schema finds them. */
const dnsParam = { [ERROR_CODE_KEYWORD]: 'INVALID_DNS_PARAMS' };
// The forms and sizes of `domain`, `resolver` and `expected_records` are the DNS rules'
// (dns-params.ts), not the schema's: the spec answers them 400 INVALID_DNS_PARAMS, which a schema
// bound would pre-empt with VALIDATION_FAILED. Those rules run in linear time; the body limit bounds the input.
export const DnsCheck = Type.Object({
  type: Type.Literal('dns'),
  domain: Type.String({ description: 'Name to query, at most 253 characters (PTR: an address or its reverse name); a malformed one is 400 `INVALID_DNS_PARAMS`.' }),
  record_type: Type.Unsafe<DnsRecordType>({ type: 'string', enum: [...DNS_RECORD_TYPES], ...dnsParam, description: 'Another value is 400 `INVALID_DNS_PARAMS`.' }),
  resolver: unsetIsNull(Type.String({ description: '`ip` or `ip:port`; omitted means the process resolver. Another form is 400 `INVALID_DNS_PARAMS`.' })),
  expected_contains: unsetIsNull(Type.String({ minLength: 1, maxLength: 2048, ...dnsParam, description: '1..2048 characters; otherwise 400 `INVALID_DNS_PARAMS`.' })),
  expected_records: unsetIsNull(Type.Array(Type.String(), {
    description: `Exact answer set; an empty list equals none. Up to ${EXPECTED_RECORDS_MAX} values, each 1..${EXPECTED_RECORD_MAX_LENGTH} characters in the record type's form; beyond, 400 \`INVALID_DNS_PARAMS\`.`,
  })),
  timeout: timeout(5_000),
}, { ...strict, title: 'DnsCheck' });

export const HeartbeatCheck = Type.Object({
  type: Type.Literal('heartbeat'),
  period: Type.Integer({ minimum: HEARTBEAT_PERIOD_MIN_MS, maximum: HEARTBEAT_MAX_MS, default: 86_400_000, description: 'Expected time between successes, ms (60 s to 30 d); default one day.' }),
  grace: Type.Integer({ minimum: 0, maximum: HEARTBEAT_MAX_MS, default: 3_600_000, description: 'Extra wait before going down, ms (0 to 30 d); default one hour.' }),
  max_runtime: unsetIsNull(Type.Integer({ minimum: HEARTBEAT_PERIOD_MIN_MS, maximum: HEARTBEAT_MAX_MS, description: 'Longest a `/start`ed run may take, ms.' })),
}, { ...strict, title: 'HeartbeatCheck' });

export const ManualCheck = Type.Object({ type: Type.Literal('manual') }, { ...strict, title: 'ManualCheck' });

export const TlsCertCheck = Type.Object({
  type: Type.Literal('tls_cert'),
  host,
  port: port('TLS port; default 443.', 443),
  server_name: unsetIsNull(Type.String({ minLength: 1, maxLength: 253, description: 'SNI override; defaults to `host`. A host name (letters, digits, hyphen, underscore, dots; an IDN allowed), never an address: otherwise 400 `VALIDATION_FAILED` naming `check.server_name`.' })),
  warn_days: days(30, 'Degraded below this many days; strictly greater than `critical_days`'),
  critical_days: days(7, 'Down below this many days'),
  timeout: timeout(10_000),
  ip_version: ipVersion,
}, { ...strict, title: 'TlsCertCheck' });

export const DomainExpiryCheck = Type.Object({
  type: Type.Literal('domain_expiry'),
  domain: Type.String({ minLength: 3, maxLength: 253, description: '`name.tld` (no dot, an empty label or a trailing dot is 400); stored trimmed, lower case and ASCII, as a dns check stores its name. A TLD with no RDAP service in the bootstrap registry (`checker.rdap_bootstrap_url`) is 400 `VALIDATION_FAILED`: its registry publishes no expiry data. While the registry cannot be fetched, writes are accepted.' }),
  warn_days: days(30, 'Degraded below this many days; strictly greater than `critical_days`'),
  critical_days: days(7, 'Down below this many days'),
  timeout: timeout(10_000),
}, { ...strict, title: 'DomainExpiryCheck' });

const selector = Type.String({ minLength: 1, maxLength: 1024 });
export const FlowStep = discriminated('op', [
  Type.Object({ op: Type.Literal('goto'), url: Type.String({
    minLength: 1, maxLength: 2048,
    description: 'A path on the current origin (one leading `/`), or an http(s) URL judged like `start_url`; `//host/...` and `///x` name a host, so they are judged as URLs (and refused: no scheme).',
  }) }, strict),
  Type.Object({ op: Type.Literal('fill'), selector, value: Type.String({ maxLength: 4096, description: 'May be a `{{name}}` reference to an org secret; redacted as `***` in responses.' }) }, strict),
  Type.Object({ op: Type.Literal('click'), selector }, strict),
  Type.Object({ op: Type.Literal('wait_for'), selector }, strict),
  Type.Object({ op: Type.Literal('assert_text'), contains: Type.String({ minLength: 1, maxLength: 1024 }), selector: unsetIsNull(selector) }, strict),
  Type.Object({ op: Type.Literal('assert_url'), contains: Type.String({ minLength: 1, maxLength: 2048 }) }, strict),
]);

export const FlowCheck = Type.Object({
  type: Type.Literal('flow'),
  start_url: Type.String({ minLength: 1, maxLength: 2048, description: 'http or https URL with a host as written (`https:///x` is a missing host); otherwise 400 `VALIDATION_FAILED` naming `check.start_url`.' }),
  // The step count is the flow rule's (kinds.ts): the spec answers it 400 INVALID_FLOW_PARAMS, which
  // a maxItems here would pre-empt; the body limit bounds the array.
  steps: Type.Array(FlowStep, { minItems: 1, description: `At most ${FLOW_STEPS_MAX} (or the plan's \`max_flow_steps\`), else 400 \`INVALID_FLOW_PARAMS\`; at least one \`assert_*\`.` }),
  timeout: Type.Integer({ minimum: FLOW_TIMEOUT_MS.min, maximum: FLOW_TIMEOUT_MS.max, default: 30_000, description: 'Whole-run budget, ms.' }),
  step_timeout: Type.Integer({ minimum: FLOW_STEP_TIMEOUT_MS.min, maximum: FLOW_STEP_TIMEOUT_MS.max, default: 5_000, description: 'Per-step selector wait, ms.' }),
  verify_tls: Type.Boolean({ default: true }),
}, { ...strict, title: 'FlowCheck' });

export const CheckSpec = discriminated('type', [HttpCheck, TcpCheck, PingCheck, DnsCheck, HeartbeatCheck, ManualCheck, TlsCertCheck, DomainExpiryCheck, FlowCheck], {
  description: 'The check, a tagged union on `type`.',
});

export type CheckSpecT = Static<typeof CheckSpec>;
export type HttpCheckT = Static<typeof HttpCheck>;
export type FlowStepT = Static<typeof FlowStep>;
