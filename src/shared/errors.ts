// The one error type domain code throws. Codes are the spec's (both documents and CONTRACT.md);
// the HTTP layer maps an AppError to the wire envelope in one place.

export const ERROR_CODES = [
  // conventions
  'INVALID_JSON', 'INVALID_CONTENT_TYPE', 'VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE', 'NOT_FOUND', 'METHOD_NOT_ALLOWED',
  'RATE_LIMITED', 'INTERNAL', 'SERVICE_UNAVAILABLE', 'CONFLICT',
  // auth
  'UNAUTHENTICATED', 'TOKEN_AUDIENCE', 'INSUFFICIENT_SCOPE', 'ORG_REQUIRED', 'ORG_HEADER_INVALID', 'ORG_HEADER_MISMATCH',
  'EMAIL_NOT_VERIFIED', 'USER_EXISTS',
  // plans and operator
  'QUOTA_EXCEEDED', 'PLAN_OVERRIDE_INVALID', 'SUBSCRIPTION_STATE', 'REGION_EXISTS',
  // monitors (monitoring-api.md)
  'REDACTION_SENTINEL', 'CHECK_KIND_IMMUTABLE', 'INVALID_IP_VERSION', 'INVALID_DNS_PARAMS', 'INVALID_ALERT_CONFIG',
  'INVALID_INTERVAL', 'INVALID_MANUAL_STATE', 'INVALID_ADDRESS', 'INVALID_FLOW_PARAMS', 'URL_PATTERN_BLOCKED',
  'ABUSE_BLOCKED', 'DOMAIN_DENYLISTED', 'FLOW_CHECKS_DISABLED', 'SMS_ALERTS_DISABLED', 'ON_CALL_DISABLED',
  'MANUAL_NOT_CONFIGURED', 'BULK_TOO_LARGE', 'REGION_INVALID', 'INVALID_REGION_POLICY', 'NO_FLOW_CAPABLE_AGENT',
  'MIN_CHECK_INTERVAL', 'UNRESOLVED_VARIABLE', 'MAINTENANCE_CANCELLED', 'MAINTENANCE_UPDATE_LIMIT',
  'HEARTBEAT_NOT_PROBEABLE', 'INCIDENT_NARRATION_DISABLED', 'TARGET_HELD',
  // billing (service-api.md): this build has no payment provider
  'BILLING_UNAVAILABLE',
  // variables (service-api.md)
  'INVALID_VARIABLE_KEY', 'VARIABLE_IN_USE', 'VARIABLE_KEY_EXISTS',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface AppErrorExtra {
  field?: string;
  /** QUOTA_EXCEEDED names the quota. */
  quota?: string;
  /** An unknown key lists what its object accepts. */
  allowed?: string[];
  /** Seconds, sent as `Retry-After`. */
  retryAfter?: number;
  /** A quota or rate-limit refusal: what the HTTP layer appends to `quota_events` (never in the body). */
  rejection?: Rejection;
}

/** A refusal as `quota_events` records it (service-api.md, Events 6); the caller's ids when the request has none yet. */
export interface Rejection {
  event: 'quota_exceeded' | 'rate_limited';
  quota: string;
  details: Record<string, unknown>;
  accountId?: string;
  userId?: string;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly extra: AppErrorExtra = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const notFound = (what = 'resource'): AppError => new AppError(404, 'NOT_FOUND', `${what} not found`);

export const quotaExceeded = (quota: string, limit: number | null, details: Record<string, unknown> = {}, field?: string): AppError =>
  new AppError(422, 'QUOTA_EXCEEDED', `plan limit reached: ${quota} is ${limit ?? 'unlimited'}`,
    { quota, ...(field !== undefined && { field }), rejection: { event: 'quota_exceeded', quota, details: { limit, ...details } } });

/**
 * The same error placed under `prefix` (an item of a batch: `targets[3]`, `copies[1]`): its field
 * becomes `targets[3].check.url`, or `targets[3]` when it named none. Other errors pass through.
 */
export function underField(err: unknown, prefix: string): unknown {
  if (!(err instanceof AppError)) return err;
  const { field } = err.extra;
  const message = field && err.message.startsWith(field) ? `${prefix}.${err.message}` : `${prefix}: ${err.message}`;
  return new AppError(err.status, err.code, message, { ...err.extra, field: field ? `${prefix}.${field}` : prefix });
}
