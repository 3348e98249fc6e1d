// Check kinds, floors and limits of monitoring-api.md ("Limits", "Alert config"): the one place
// schemas and rules read them from.

export const CHECK_KINDS = ['http', 'tcp', 'ping', 'dns', 'heartbeat', 'manual', 'tls_cert', 'domain_expiry', 'flow'] as const;
export type CheckKind = (typeof CHECK_KINDS)[number];

/** Kinds the scheduler probes over the network (heartbeat and manual are fed from outside). */
export const PROBED_KINDS: readonly CheckKind[] = ['http', 'tcp', 'ping', 'dns', 'tls_cert', 'domain_expiry', 'flow'];

/** Seconds; the effective floor is max(plan floor, kind floor). Manual is exactly 60. */
export const KIND_INTERVAL_FLOOR_SECS: Readonly<Record<CheckKind, number>> = {
  http: 10, tcp: 10, ping: 10, dns: 10, heartbeat: 60, manual: 60, flow: 300, tls_cert: 3600, domain_expiry: 43200,
};

export const MANUAL_INTERVAL_SECS = 60;
/** Longest interval accepted (the spec names no ceiling): a monthly check, and far inside the integer column. */
export const INTERVAL_MAX_SECS = 31 * 86400;
export const DOMAIN_EXPIRY_DEFAULT_INTERVAL_SECS = 86400;
export const TLS_CERT_DEFAULT_INTERVAL_SECS = 43200;

/** Heartbeat evaluation cadence: one tenth of period + grace, held between 60 s and 300 s (or the plan floor). */
export const HEARTBEAT_INTERVAL_MIN_SECS = 60;
export const HEARTBEAT_INTERVAL_MAX_SECS = 300;

export const DAY_MS = 86_400_000;
export const HEARTBEAT_PERIOD_MIN_MS = 60_000;
export const HEARTBEAT_MAX_MS = 30 * DAY_MS;

export { TAGS_MAX, TAG_MAX_LENGTH } from '../shared/tags.js';
export const GROUP_NAME_MAX_LENGTH = 50;
export const MANUAL_NOTE_MAX_LENGTH = 200;
export const EXPECTED_RECORDS_MAX = 50;
export const EXPECTED_RECORD_MAX_LENGTH = 2048;
export const FLOW_STEPS_MAX = 30;
export const FLOW_TIMEOUT_MS = { min: 1000, max: 120_000 } as const;
export const FLOW_STEP_TIMEOUT_MS = { min: 100, max: 60_000 } as const;
export const EXPIRY_DAYS = { min: 1, max: 365 } as const;
export const BULK_CREATE_MAX = 10_000;
export const DUPLICATE_COPIES_MAX = 100;

export const RECOVERY_PERIOD_MAX_SECS = 1800;
export const RENOTIFY_MIN_SECS = 60;
/**
 * The spec sets no ceiling on these: the only one is what the integer columns hold (2^31 - 1),
 * beyond which is 400 `INVALID_ALERT_CONFIG` like the spec's own bounds.
 */
export const ALERT_CONFIRMATIONS_MAX = 2_147_483_647;
export const RENOTIFY_MAX_SECS = 2_147_483_647;

export const DEFAULT_ALERT_CONFIRMATIONS = 2;
export const DEFAULT_RENOTIFY_INTERVAL_SECS = 3600;
export const DEFAULT_REGION_POLICY = 'majority';

/** 180 s for the network kinds that flap; 0 for the others (manual accepts only 0). */
export function defaultRecoveryPeriodSecs(kind: CheckKind): number {
  return kind === 'http' || kind === 'tcp' || kind === 'ping' || kind === 'dns' || kind === 'flow' ? 180 : 0;
}

export const DNS_RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT', 'SOA', 'PTR', 'CAA', 'SRV'] as const;
export type DnsRecordType = (typeof DNS_RECORD_TYPES)[number];

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export const IP_VERSIONS = ['any', 'ipv4', 'ipv6'] as const;
export const FLOW_OPS = ['goto', 'fill', 'click', 'wait_for', 'assert_text', 'assert_url'] as const;

/** The redaction sentinel responses put in place of stored credentials. */
export { REDACTED } from '../shared/seal.js';
