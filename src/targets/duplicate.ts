// Duplicate (monitoring-api.md, "Duplicate rules"): copies of one monitor, each with its own name
// and optionally its own address, all or none, answered in request order.
import type { AppErrorExtra } from '../shared/errors.js';
import { AppError, underField } from '../shared/errors.js';
import type { CheckSpecT } from './check-specs.js';
import { prepareCheck } from './checks.js';
import { memoizedGuard } from './network.js';
import { openCredentials } from './redaction.js';
import { clampFlow } from './regions.js';
import { targetName } from './rules.js';
import type { TargetT } from './schema.js';
import { getTargetRowInOrg, toTarget, type TargetsCtx } from './service.js';
import { checkItemsInStore, insertItemsWithinQuota, type PreparedItem } from './bulk.js';
import type { TargetRow } from './store.js';
import type { Executor } from '../db/db.js';

export const DUPLICATE_MAX = 100;

export interface Copy { name: string; address?: string }

/** The check fields an address replaces, per kind; heartbeat and manual have none. */
const ADDRESS_FIELDS = new Set(['check.url', 'check.start_url', 'check.host', 'check.port', 'check.domain']);

const invalidAddress = (message: string, extra: AppErrorExtra = {}) =>
  new AppError(400, 'VALIDATION_FAILED', `address: ${message}`, { ...extra, field: 'address' });

/** `host`, `host:port` or `[v6]:port`; a bare IPv6 literal is a host. */
function hostAndPort(address: string): { host: string; port?: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(address);
  const [host, port] = bracketed ? [bracketed[1]!, bracketed[2]]
    : address.split(':').length === 2 ? address.split(':') as [string, string] : [address, undefined];
  if (port === undefined) return { host };
  const n = Number(port);
  if (!/^\d{1,5}$/.test(port) || n < 1 || n > 65535) throw invalidAddress('the port must be 1..65535');
  return { host, port: n };
}

/** The source's check with `address` put in its place (rule 1). */
export function withAddress(check: CheckSpecT, address: string | undefined): CheckSpecT {
  if (address === undefined) return check;
  const a = address.trim();
  switch (check.type) {
    case 'http': return { ...check, url: a };
    case 'flow': return { ...check, start_url: a };
    case 'tcp': case 'tls_cert': { const { host, port } = hostAndPort(a); return { ...check, host, port: port ?? check.port }; }
    case 'ping': return { ...check, host: a };
    case 'dns': case 'domain_expiry': return { ...check, domain: a };
    case 'heartbeat': case 'manual':
      throw new AppError(400, 'INVALID_ADDRESS', `address: a ${check.type} monitor has no address to replace`, { field: 'address' });
  }
}

/**
 * The rules an address can break in fields it leaves alone (the source's own address passed them):
 * the family the source's `ip_version` excludes, and `verify_tls: false` with credentials, which an
 * https address refuses where the source's http one did not.
 */
const ADDRESS_RULES = new Set(['check.verify_tls']);

/**
 * An error in the copy's check names what the request holds: `address` when the address caused it
 * (a field it replaced, or an address rule), else the copy itself, since a copy has no `check` (the
 * source's check no longer passes, e.g. a private URL stored while the deployment allowed them).
 */
function asCopyError(err: unknown, address: string | undefined): unknown {
  if (!(err instanceof AppError)) return err;
  const field = err.extra.field ?? '';
  const byAddress = address !== undefined && (ADDRESS_FIELDS.has(field) || ADDRESS_RULES.has(field) || err.code === 'INVALID_IP_VERSION');
  if (byAddress) return new AppError(err.status, err.code, `address: ${err.message}`, { ...err.extra, field: 'address' });
  if (!field.startsWith('check.')) return err;
  const { field: _copyHasNoCheck, ...extra } = err.extra;
  return new AppError(err.status, err.code, `the source's ${err.message}`, extra);
}

/** Every copy checked as a create would check its check; the rest is copied from the stored row (rule 2). */
async function prepareCopies(ctx: TargetsCtx, source: TargetRow, copies: readonly Copy[]): Promise<PreparedItem[]> {
  const stored = openCredentials(source.check_spec, ctx.sealer);
  if (!stored) throw new AppError(409, 'CONFLICT', 'the source monitor\'s credentials were sealed under a key this deployment no longer has; set them again first');
  const itemCtx: TargetsCtx = { ...ctx, network: { ...ctx.network, guard: memoizedGuard(ctx.network.guard) } };
  const catalog = await ctx.regions.enabled();
  const items: PreparedItem[] = [];
  for (const [i, copy] of copies.entries()) {
    try {
      const name = targetName(copy.name);
      const check = withAddress(stored, copy.address);
      let prepared;
      try {
        prepared = await prepareCheck(check, itemCtx);
      } catch (err) {
        throw asCopyError(err, copy.address);
      }
      items.push({
        texts: prepared.texts,
        values: {
          name, kind: source.kind, check_spec: prepared.stored, interval_secs: source.interval_secs, enabled: source.enabled,
          tags: source.tags, regions: source.kind === 'flow' ? clampFlow('flow', source.regions, catalog) : source.regions,
          group_name: source.group_name, owner_user_id: ctx.userId,
          alert_channel_ids: source.alert_channel_ids, alert_confirmations: source.alert_confirmations, notify_recovery: source.notify_recovery,
          renotify_interval_secs: source.renotify_interval_secs, recovery_period_secs: source.recovery_period_secs,
          region_policy: source.region_policy, variable_refs: prepared.variableRefs, write_source: ctx.writeSource,
        },
      });
    } catch (err) {
      throw underField(err, `copies[${i}]`);
    }
  }
  return items;
}

/** Checks every copy before any transaction: 413 `BULK_TOO_LARGE` past 100, 404 for an unknown source. */
export async function prepareDuplicate(ctx: TargetsCtx, id: string, copies: readonly Copy[]): Promise<PreparedItem[]> {
  if (copies.length > DUPLICATE_MAX) {
    throw new AppError(413, 'BULK_TOO_LARGE', `copies: at most ${DUPLICATE_MAX} per request (got ${copies.length})`, { field: 'copies' });
  }
  return prepareCopies(ctx, await getTargetRowInOrg(ctx.db, ctx.org.id, id), copies);
}

/**
 * Writes prepared copies in the caller's transaction (the idempotency key's). A flow copy beyond
 * the plan's flow limits is 400 `INVALID_FLOW_PARAMS` (rule 3); no room for the batch is 422
 * `QUOTA_EXCEEDED`. A source deleted meanwhile is 404.
 */
export async function insertDuplicates(tx: Executor, ctx: TargetsCtx, id: string, items: readonly PreparedItem[]): Promise<{ targets: TargetT[] }> {
  await getTargetRowInOrg(tx, ctx.org.id, id);
  await checkItemsInStore(tx, ctx, items, (i) => `copies[${i}]`);
  const rows = await insertItemsWithinQuota(tx, ctx, items, 'target.duplicated', { flowOverflow: 'invalid_flow_params', sourceId: id });
  return { targets: rows.map(toTarget) };
}
