// The plan catalog of service-api.md ("Plan quotas", "Rate budgets", feature flags).
// Seed rows, override validation, usage reports and config keys all read these constants.

export const PLAN_IDS = ['free', 'founding', 'pro', 'team'] as const;
export type PlanId = (typeof PLAN_IDS)[number];

/** Pooled quotas: counted against the account. */
export const QUOTA_COLUMNS = [
  'max_orgs', 'max_targets', 'max_flow_checks', 'max_regions', 'max_members', 'max_pending_invitations',
  'max_api_tokens_per_user', 'max_status_pages', 'max_public_components', 'max_share_links_per_monitor',
  'max_shared_monitors', 'max_maintenance_windows', 'max_notification_channels', 'max_escalation_policies',
  'max_on_call_schedules',
] as const;

/** Policy values: limits that are not counts of rows. */
export const POLICY_COLUMNS = [
  'min_check_interval_secs', 'retention_days', 'raw_days', 'evidence_days', 'max_flow_steps', 'max_logo_size_bytes',
] as const;

export const RATE_COLUMNS = [
  'api_writes_per_minute', 'api_reads_per_minute', 'bulk_ops_per_minute', 'test_now_per_minute', 'check_now_per_minute',
] as const;

export const FEATURE_FLAGS = [
  'custom_domain_enabled', 'white_label_enabled', 'sms_alerts_enabled', 'incident_narration_enabled',
  'on_call_enabled', 'private_pages_enabled',
] as const;

export type QuotaColumn = (typeof QUOTA_COLUMNS)[number];
export type PolicyColumn = (typeof POLICY_COLUMNS)[number];
export type RateColumn = (typeof RATE_COLUMNS)[number];
export type FeatureFlag = (typeof FEATURE_FLAGS)[number];
export type PlanNumericColumn = QuotaColumn | PolicyColumn | RateColumn;

export const PLAN_NUMERIC_COLUMNS: readonly PlanNumericColumn[] = [...QUOTA_COLUMNS, ...POLICY_COLUMNS, ...RATE_COLUMNS];

/** Largest value of a plan column: the columns are PostgreSQL `integer`; a larger one would fail every write that reads it. */
export const PLAN_VALUE_MAX = 2_147_483_647;

/** The flow engine's own ceiling; a plan's `max_flow_steps` is clamped to it. */
export const FLOW_STEPS_CEILING = 30;

/** The fixed support budget, outside the plan. */
export const SUPPORT_PER_MINUTE = 2;

/** `null` is unlimited. */
export type PlanCaps = Record<PlanNumericColumn, number | null>;
export type PlanFlags = Record<FeatureFlag, boolean>;

// One row per column, values for [free, founding, pro, team], as the spec's tables read. `null` is unlimited.
const LOGO = 1048576;
const CAP_TABLE: Record<PlanNumericColumn, readonly [number | null, number | null, number | null, number | null]> = {
  max_orgs: [1, 3, 5, 10],
  max_targets: [20, 50, 50, 150],
  min_check_interval_secs: [180, 60, 60, 30],
  retention_days: [30, 90, 90, 395],
  raw_days: [30, 30, 30, 30],
  evidence_days: [7, 7, 7, 7],
  max_flow_steps: [30, 30, 30, 30],
  max_flow_checks: [0, 1, 3, 10],
  max_regions: [3, null, null, null],
  max_members: [3, 5, 5, 15],
  max_pending_invitations: [10, 15, 15, 25],
  max_api_tokens_per_user: [5, 7, 7, 10],
  max_status_pages: [1, 2, 2, 5],
  max_public_components: [15, 30, 30, 75],
  max_share_links_per_monitor: [1, 3, 3, 5],
  max_shared_monitors: [2, 5, 5, 10],
  max_maintenance_windows: [20, 30, 30, 50],
  max_notification_channels: [20, 30, 30, 50],
  max_escalation_policies: [0, 0, 0, 50],
  max_on_call_schedules: [0, 0, 0, 25],
  max_logo_size_bytes: [LOGO, LOGO, LOGO, LOGO],
  api_writes_per_minute: [600, 900, 1200, 1800],
  api_reads_per_minute: [6000, 9000, 12000, 18000],
  bulk_ops_per_minute: [30, 45, 60, 90],
  test_now_per_minute: [60, 90, 120, 180],
  check_now_per_minute: [60, 90, 120, 180],
};

// The spec names the flags but not their values per plan: these follow the tiers' prices
// (on-call goes with the plan that has escalation policies; private pages from pro up).
const FLAG_TABLE: Record<FeatureFlag, readonly [boolean, boolean, boolean, boolean]> = {
  custom_domain_enabled: [false, false, true, true],
  white_label_enabled: [false, false, false, true],
  sms_alerts_enabled: [false, false, true, true],
  incident_narration_enabled: [false, true, true, true],
  on_call_enabled: [false, false, false, true],
  private_pages_enabled: [false, false, true, true],
};

const PLAN_NAMES: Record<PlanId, string> = { free: 'Free', founding: 'Founding', pro: 'Pro', team: 'Team' };

export interface SeedPlan { id: PlanId; name: string; caps: PlanCaps; flags: PlanFlags }

export const SEED_PLANS: readonly SeedPlan[] = PLAN_IDS.map((id, i) => ({
  id,
  name: PLAN_NAMES[id],
  caps: Object.fromEntries(PLAN_NUMERIC_COLUMNS.map((c) => [c, CAP_TABLE[c][i] ?? null])) as PlanCaps,
  flags: Object.fromEntries(FEATURE_FLAGS.map((f) => [f, FLAG_TABLE[f][i] ?? false])) as PlanFlags,
}));
