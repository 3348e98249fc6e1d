// The incident engine: folded into the transaction that writes a batch of results, so each result
// is judged exactly once and an incident change commits with the results that caused it. Per batch:
// the monitors whose results could change something are picked (a healthy one's up results cannot:
// `monitorsToJudge`), their alert config, streak rows and open incidents are read (locked, in one
// order, so two nodes writing results of one monitor wait for each other), each monitor's results
// are fed to the rule (verdict.ts) in time order, and what changed is written back.
import type { Executor } from '../db/db.js';
import { suppressingSpans } from '../maintenance/index.js';
import { NO_PROBE_REGION, type CheckResultRecord, type ResultFold } from '../results/index.js';
import type { Clock } from '../shared/context.js';
import { newId } from '../shared/ids.js';
import type { CheckKind } from '../targets/constants.js';
import type { RegionPolicyT } from '../targets/schema.js';
import {
  deleteStreaks, IMPACT_RANK, openIncidentOf, writeEvents, writeIncidents, writeStreaks,
  type Changed, type EventRow, type Impact, type IncidentRow, type StreakWrite,
} from './incident-writes.js';
import { gateOpen, type Span } from './open-gate.js';
import { applyResult, type AlertRule, type MonitorState, type RegionStreak, type Transition } from './verdict.js';

export type { Impact } from './incident-writes.js';

interface TargetAlertRow {
  id: string; org_id: string; account_id: string; name: string; kind: CheckKind;
  alert_confirmations: number; region_policy: RegionPolicyT; recovery_period_secs: number;
  /** The monitor's regions that are enabled in the region catalog: the ones that report. */
  live_regions: string[];
  notify_recovery: boolean; renotify_interval_secs: number;
}
interface StreakRow { target_id: string; region: string; failing: number; failing_since: Date | null; passing: number; passing_since: Date | null }

/**
 * Heartbeat verdicts and manual states are each one decision: they confirm at once, in one
 * "region". A heartbeat writes one result per verdict change, so a second failure in a row never
 * comes and its confirmations stay 1; its recovery waits `recovery_period_secs` (closed by the
 * clock: recovery-wait.ts). A manual state closes as soon as it passes, and a manual `degraded`
 * is a failure someone declared. A probed monitor counts the regions that report.
 */
export function alertRuleOf(row: TargetAlertRow): AlertRule {
  if (row.kind === 'manual') return { confirmations: 1, policy: 'any', recoveryPeriodMs: 0, regionCount: 1, degradedFails: true };
  if (row.kind === 'heartbeat') return { confirmations: 1, policy: 'any', recoveryPeriodMs: row.recovery_period_secs * 1000, regionCount: 1 };
  return { confirmations: row.alert_confirmations, policy: row.region_policy, recoveryPeriodMs: row.recovery_period_secs * 1000, regionCount: Math.max(1, row.live_regions.length) };
}

/**
 * The regions whose streaks count: a verdict's one (no probe), or the monitor's regions enabled in
 * the catalog. A region removed from the monitor, or disabled, reports nothing more: its old
 * streak is dropped, so it neither holds a policy's count nor confirms an outage.
 */
export function countedRegions(row: TargetAlertRow): ReadonlySet<string> {
  return new Set(row.kind === 'manual' || row.kind === 'heartbeat' ? [NO_PROBE_REGION] : row.live_regions);
}

/**
 * The region catalog's enabled ids, read once per statement as `enabled.ids`. A subquery on
 * `regions` per monitor scanned the table once per monitor, and on the embedded store every scan of
 * a table asks the file system for its size (an `fstat`).
 */
const WITH_ENABLED_REGIONS = `WITH enabled AS MATERIALIZED (SELECT coalesce(array_agg(id), '{}') AS ids FROM regions WHERE enabled)`;

/** Monitor `t`'s regions enabled in the catalog (its live regions), under WITH_ENABLED_REGIONS; stored sets hold no duplicates (checkRegions). */
const liveRegions = (t: string): string => `ARRAY(SELECT r FROM unnest(${t}.regions) AS r WHERE r = ANY(enabled.ids))`;

/** What a batch writes back. */
interface Writes { streaks: StreakWrite[]; stale: { targetId: string; region: string }[]; changed: Changed[]; events: EventRow[] }

/** The fold for the result writer; `clock` dates the rows it writes (reminders, the outbox). */
export const incidentFold = (clock: Clock): ResultFold => (tx, records) => foldIntoIncidents(tx, records, clock);

async function foldIntoIncidents(tx: Executor, records: readonly CheckResultRecord[], clock: Clock): Promise<void> {
  const targetIds = await monitorsToJudge(tx, records);
  if (!targetIds.length) return;
  const targets = await tx.query<TargetAlertRow>(
    `${WITH_ENABLED_REGIONS}
     SELECT t.id, t.org_id, t.account_id, t.name, t.kind, t.alert_confirmations, t.region_policy, t.recovery_period_secs,
            ${liveRegions('t')} AS live_regions, t.notify_recovery, t.renotify_interval_secs
       FROM targets t CROSS JOIN enabled WHERE t.id = ANY($1::uuid[])`, [targetIds], { prepared: 'incident_fold_targets' });
  if (!targets.length) return;
  const live = targets.map((t) => t.id).sort();
  const streakRows = await tx.query<StreakRow>(
    'SELECT * FROM alert_streaks WHERE target_id = ANY($1::uuid[]) ORDER BY target_id, region FOR UPDATE', [live], { prepared: 'incident_fold_streaks' });
  const openRows = await tx.query<IncidentRow>(
    `SELECT id, target_id, started_at, recovering_since, recovered, impact, cause FROM incidents
      WHERE target_id = ANY($1::uuid[]) AND source = 'monitor' AND status = 'open' ORDER BY target_id FOR UPDATE`, [live], { prepared: 'incident_fold_open' });

  // Windows from the oldest failing streak on: one that ended before this batch still dates an
  // incident its failures open now.
  const judged = new Set(live);
  const mine = records.filter((r) => judged.has(r.targetId));
  const times = [...mine.map((r) => r.checkedAt.getTime()), ...streakRows.flatMap((s) => (s.failing_since ? [s.failing_since.getTime()] : []))];
  const spans = await suppressingSpans(tx, live, new Date(Math.min(...times)), new Date(Math.max(...times)));

  const resultsOf = groupBy(mine, (r) => r.targetId);
  const streaksOf = groupBy(streakRows, (s) => s.target_id);
  const openOf = new Map(openRows.map((row) => [row.target_id, row]));
  const writes: Writes = { streaks: [], stale: [], changed: [], events: [] };
  for (const target of targets) {
    await judgeMonitor(tx, target, { results: resultsOf.get(target.id)!, streaks: streaksOf.get(target.id) ?? [], open: openOf.get(target.id) ?? null, spans: spans.get(target.id) ?? [] }, writes);
  }

  await deleteStreaks(tx, writes.stale);
  await writeStreaks(tx, writes.streaks);
  await writeIncidents(tx, writes.changed, clock.now());
  await writeEvents(tx, writes.events);
}

/**
 * The monitors of `records` whose results the rule must see, in id order. A monitor is left out
 * when its results here are all `up` and it is a probed kind with no open incident, each of its
 * live regions (its own, enabled in the catalog) has a streak and every streak is passing at its
 * confirmations: the rule would change nothing (a streak counts no further than its cap), so the
 * steady state of a healthy fleet costs one statement that returns nothing (per monitor of the
 * batch, index lookups of it and its streaks; the open incidents and the region catalog read once),
 * instead of reading every monitor's alert config and locking its streaks.
 * Such a result takes no lock, so a batch of another region's results committing beside it is not
 * re-judged with it: a recovery or close it would have started waits for the monitor's next result.
 */
async function monitorsToJudge(tx: Executor, records: readonly CheckResultRecord[]): Promise<string[]> {
  const judged = new Set<string>();
  const allUp = new Set<string>();
  for (const r of records) {
    if (r.status !== 'up') judged.add(r.targetId);
    else allUp.add(r.targetId);
  }
  const candidates = [...allUp].filter((id) => !judged.has(id));
  if (candidates.length) {
    const rows = await tx.query<{ id: string }>(
      `${WITH_ENABLED_REGIONS}
       SELECT t.id FROM targets t CROSS JOIN enabled LEFT JOIN alert_streaks s ON s.target_id = t.id
        WHERE t.id = ANY($1::uuid[])
        GROUP BY t.id, enabled.ids
       HAVING t.kind IN ('heartbeat', 'manual')
           OR t.id IN (SELECT i.target_id FROM incidents i WHERE i.target_id = ANY($1::uuid[]) AND i.source = 'monitor' AND i.status = 'open')
           OR bool_or(s.failing > 0 OR s.passing < t.alert_confirmations OR NOT s.region = ANY(t.regions) OR NOT s.region = ANY(enabled.ids))
           OR count(s.target_id) <> cardinality(${liveRegions('t')})`,
      [candidates], { prepared: 'incident_fold_unquiet' });
    for (const row of rows) judged.add(row.id);
  }
  return [...judged].sort();
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(key(item));
    if (list) list.push(item);
    else out.set(key(item), [item]);
  }
  return out;
}

const streakOf = (s: StreakRow): RegionStreak =>
  ({ failing: s.failing, failingSince: s.failing_since?.getTime() ?? null, passing: s.passing, passingSince: s.passing_since?.getTime() ?? null });

type OpenTransition = Extract<Transition, { kind: 'open' }>;
interface MonitorInput { results: CheckResultRecord[]; streaks: StreakRow[]; open: IncidentRow | null; spans: Span[] }

/** Feeds one monitor's results to the rule in time order and collects what changed. */
async function judgeMonitor(tx: Executor, target: TargetAlertRow, input: MonitorInput, writes: Writes): Promise<void> {
  const rule = alertRuleOf(target);
  const counted = countedRegions(target);
  const stored: Record<string, RegionStreak> = {};
  for (const s of input.streaks) {
    if (counted.has(s.region)) stored[s.region] = streakOf(s);
    else writes.stale.push({ targetId: target.id, region: s.region });
  }
  const { open } = input;
  let state: MonitorState = { regions: stored, incident: open && openIncidentOf(open) };
  let current: Changed | null = open && {
    row: open, id: open.id, orgId: target.org_id, accountId: target.account_id, targetId: target.id, startedAt: open.started_at.getTime(), incident: state.incident,
    impact: open.impact, cause: open.cause, endedAt: null, title: '', notifyRecovery: target.notify_recovery, renotifySecs: target.renotify_interval_secs,
  };
  let touched = false;
  const results = input.results.sort((a, b) => a.checkedAt.getTime() - b.checkedAt.getTime());
  for (const result of results) {
    // A check still in flight from a region the monitor left (or that was disabled) counts for nothing.
    if (!counted.has(result.region)) continue;
    const out = await judgeResult(tx, target, input.spans, state, rule, result);
    state = out.state;
    for (const t of out.transitions) {
      current = onTransition(t, current, target, rule, result, writes.events);
      touched = true;
      if (t.kind === 'closed') {
        writes.changed.push(current!);
        current = null;
      }
    }
    if (target.kind === 'manual' && current && result.status !== 'up' && !out.transitions.some((t) => t.kind === 'open')) {
      restateManual(current, target.name, result, writes.events);
      touched = true;
    }
    if (current) current.incident = state.incident;
  }
  if (current && touched) writes.changed.push(current);
  for (const [region, streak] of Object.entries(state.regions)) {
    if (streak !== stored[region]) writes.streaks.push({ targetId: target.id, region, streak });
  }
}

/**
 * The rule's answer to one result, its `open` passed through the gate (open-gate.ts): redated, or
 * dropped with the streaks kept.
 */
async function judgeResult(tx: Executor, target: TargetAlertRow, spans: readonly Span[], state: MonitorState, rule: AlertRule, result: CheckResultRecord): Promise<{ state: MonitorState; transitions: Transition[] }> {
  const at = result.checkedAt.getTime();
  const out = applyResult(state, rule, result.region, result.status, at);
  const opening = out.transitions.find((t): t is OpenTransition => t.kind === 'open');
  if (!opening) return out;
  const startedAt = await gateOpen(tx, spans, { targetId: target.id, manual: target.kind === 'manual', startedAt: opening.startedAt, at, status: result.status });
  if (startedAt === null) return { state: { ...out.state, incident: null }, transitions: [] };
  return {
    state: { ...out.state, incident: { ...out.state.incident!, startedAt } },
    transitions: out.transitions.map((t) => (t === opening ? { ...opening, startedAt } : t)),
  };
}

/** The title the engine gives a monitor's incident. */
const titleOf = (name: string, state: 'degraded' | 'down'): string => `${name} is ${state}`;

/** A manual state set down or degraded on an open incident: its note becomes the cause, and a worse state raises it. */
function restateManual(current: Changed, name: string, result: CheckResultRecord, events: EventRow[]): void {
  const impact: Impact = result.status === 'down' ? 'major_outage' : 'degraded';
  if (IMPACT_RANK[impact] > IMPACT_RANK[current.impact]) {
    events.push({ incidentId: current.id, at: result.checkedAt.getTime(), kind: 'raised', message: `raised to ${impact} by a state set by hand` });
    current.impact = impact;
    current.retitle = { from: titleOf(name, 'degraded'), to: titleOf(name, 'down') };
  }
  current.cause = result.error;
}

function onTransition(t: Transition, current: Changed | null, target: TargetAlertRow, rule: AlertRule, result: CheckResultRecord, events: EventRow[]): Changed | null {
  switch (t.kind) {
    case 'open': {
      const impact: Impact = result.status === 'degraded' ? 'degraded' : t.regionsDown >= rule.regionCount ? 'major_outage' : 'partial_outage';
      const opened: Changed = {
        row: null, id: newId(), orgId: target.org_id, accountId: target.account_id, targetId: target.id, startedAt: t.startedAt, incident: null, impact, cause: result.error, endedAt: null,
        title: titleOf(target.name, result.status === 'degraded' ? 'degraded' : 'down'),
        notifyRecovery: target.notify_recovery, renotifySecs: target.renotify_interval_secs,
      };
      events.push({ incidentId: opened.id, at: t.startedAt, kind: 'opened', message: result.error });
      return opened;
    }
    case 'recovering':
      events.push({ incidentId: current!.id, at: t.since, kind: 'recovering', message: null });
      return current;
    case 'relapsed':
      events.push({ incidentId: current!.id, at: t.stretch.until, kind: 'relapsed', message: result.error });
      return current;
    case 'closed':
      events.push({ incidentId: current!.id, at: t.endedAt, kind: 'closed', message: null });
      return { ...current!, endedAt: t.endedAt };
  }
}
