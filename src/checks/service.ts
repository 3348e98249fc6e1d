// One-shot checks (monitoring-api.md endpoints `targets/test` and `targets/{id}/check-now`): the
// same probes the scheduler runs, on this node's region. `test` takes a check spec as a create
// would (every write rule, SSRF and variables included) and keeps nothing; `check-now` runs the
// stored check with its stored credentials and writes the result like a scheduled one.
import type { Db } from '../db/db.js';
import type { EffectivePlan } from '../plans/service.js';
import { runnableSpec, runProbe, type ProbeContext, type ProbeResult, type RunnableSpec } from '../probes/index.js';
import { LOCAL_REGION } from '../regions/catalog.js';
import { roundTimings, staleAfterMsOf, toCheckResult, type CheckResultT, type ResultWriter } from '../results/index.js';
import { effectiveIntervalSecs } from '../scheduler/slots.js';
import type { Clock, OrgRef } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import type { Sealer } from '../shared/seal.js';
import type { CheckSpecT } from '../targets/check-specs.js';
import { checkFlowEnabled, prepareCheck } from '../targets/checks.js';
import type { NetworkCtx } from '../targets/network.js';
import { openCredentials } from '../targets/redaction.js';
import { checkVariables, getTargetRowInOrg } from '../targets/service.js';
import type { TargetRow } from '../targets/store.js';
import { NO_VARIABLES, resolveVariableValues, type OrgVariables } from '../variables/index.js';

export interface ChecksCtx {
  db: Db;
  clock: Clock;
  org: OrgRef;
  plan: EffectivePlan;
  sealer: Sealer;
  network: NetworkCtx;
  probe: ProbeContext;
  results: ResultWriter;
  /** Whether this node runs flow checks: a one-shot check runs here. */
  runsFlows: boolean;
}

type ResultFieldsT = Omit<CheckResultT, 'id' | 'target_id'>;
/** A one-shot check's answer: the check result shape, its id naming the run, no monitor. */
export type TestResultT = ResultFieldsT & { id: string; target_id: null };

/**
 * Heartbeat and manual monitors are fed from outside: nothing to probe (CONTRACT.md: 400). `field`
 * names the body's `type` on a test-run; check-now has no body, so nothing it sent is at fault.
 */
export function refuseUnprobeable(kind: unknown, field?: string): void {
  if (kind === 'heartbeat' || kind === 'manual') {
    throw new AppError(400, 'HEARTBEAT_NOT_PROBEABLE', `a ${kind} monitor is not probed: it takes ${kind === 'heartbeat' ? 'pings' : 'a state set by hand'}`, field === undefined ? {} : { field });
  }
}

/** A held monitor is not probed and raises no alert (service-api.md, "Holds"): check-now may not run it either. */
function refuseHeld(row: TargetRow): void {
  if (row.held_at !== null) {
    throw new AppError(409, 'TARGET_HELD', 'this monitor is held (the account is over a plan cap): it is not probed until released');
  }
}

/** The stale cap the scheduler would give this monitor's result: from its effective interval, not the stored one. */
const staleAfterMsFor = (row: TargetRow, plan: EffectivePlan): number =>
  staleAfterMsOf(effectiveIntervalSecs(row.kind, row.interval_secs, plan.caps.min_check_interval_secs) * 1000);

/** The test body is the check itself: a rule's `check.url` is the body's `url`. */
function atBodyRoot(err: unknown): unknown {
  if (!(err instanceof AppError) || !err.extra.field?.startsWith('check.')) return err;
  const field = err.extra.field.slice('check.'.length);
  // The message names fields too (`duplicates check.expected_records[0]`).
  return new AppError(err.status, err.code, err.message.replace(/(^|\s)check\.(?=\w)/g, '$1'), { ...err.extra, field });
}

async function variableValues(ctx: ChecksCtx, refs: readonly string[]): Promise<OrgVariables> {
  return refs.length ? resolveVariableValues(ctx.db, ctx.sealer, ctx.org.id) : NO_VARIABLES;
}

const run = async (ctx: ChecksCtx, runnable: RunnableSpec): Promise<ProbeResult> =>
  ('spec' in runnable ? runProbe(runnable.spec, { ...ctx.probe, ...(runnable.secretParts && { secretParts: runnable.secretParts }) }) : runnable.unrunnable);

const common = (result: ProbeResult, checkedAt: Date): ResultFieldsT => ({
  ...result.fields,
  region: LOCAL_REGION, checked_at: checkedAt.toISOString(), status: result.status,
  duration_ms: Math.max(0, Math.round(result.duration_ms)), error: result.error,
  ...(result.timings && { timings: roundTimings(result.timings) }),
});

/** A one-shot check runs on this node: a flow, only where the process runs flows (as a create needs a region that does). */
function refuseFlowHere(ctx: ChecksCtx, kind: string, field?: string): void {
  if (kind === 'flow' && !ctx.runsFlows) {
    throw new AppError(422, 'NO_FLOW_CAPABLE_AGENT', 'this node runs no flow checks (flow.enabled is off)', field ? { field } : {});
  }
}

export async function testCheck(ctx: ChecksCtx, spec: CheckSpecT): Promise<TestResultT> {
  refuseUnprobeable(spec.type, 'type');
  // A test-run meets every write-time refusal (service-api.md, "Errors"), the plan's flow switch first as on create.
  checkFlowEnabled(spec.type, ctx.plan);
  refuseFlowHere(ctx, spec.type, 'type');
  try {
    const prepared = await prepareCheck(spec, { plan: ctx.plan, network: ctx.network, sealer: ctx.sealer });
    await checkVariables(ctx.db, ctx.org.id, prepared.texts);
    const checkedAt = ctx.clock.now();
    const values = await variableValues(ctx, prepared.variableRefs);
    return { id: newId(), target_id: null, ...common(await run(ctx, runnableSpec(spec, prepared.variableRefs, values)), checkedAt) };
  } catch (err) {
    throw atBodyRoot(err);
  }
}

export async function checkNow(ctx: ChecksCtx, targetId: string): Promise<CheckResultT> {
  const row = await getTargetRowInOrg(ctx.db, ctx.org.id, targetId);
  refuseUnprobeable(row.kind);
  refuseHeld(row);
  refuseFlowHere(ctx, row.kind);
  const spec = openCredentials(row.check_spec, ctx.sealer);
  const checkedAt = ctx.clock.now();
  const result = await run(ctx, runnableSpec(spec, row.variable_refs, await variableValues(ctx, row.variable_refs)));
  const record = { ...result, duration_ms: Math.max(0, Math.round(result.duration_ms)), id: newId(), targetId, orgId: ctx.org.id, region: LOCAL_REGION, checkedAt, staleAfterMs: staleAfterMsFor(row, ctx.plan) };
  await ctx.db.transaction((tx) => ctx.results.writeNow(tx, record));
  return toCheckResult({
    id: record.id, target_id: targetId, region: LOCAL_REGION, checked_at: checkedAt, status: record.status,
    duration_ms: record.duration_ms, error: record.error, timings: roundTimings(record.timings) ?? null, fields: record.fields ?? null,
  });
}
