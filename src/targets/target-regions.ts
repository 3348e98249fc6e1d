// `GET/PUT /api/v1/targets/{id}/regions` (CONTRACT.md): the regions a monitor probes from.
import { writeAudit } from '../shared/audit.js';
import { checkRegions, regionsAtHandOut } from './regions.js';
import { getTargetRowInOrg, type TargetsCtx } from './service.js';
import { setTargetRegions, type TargetRow } from './store.js';
import type { Static } from '@sinclair/typebox';
import type { TargetRegions } from './schema.js';

type RegionsT = Static<typeof TargetRegions>;

/**
 * The regions that serve the monitor, as catalog entries in stored order: the scheduler's own cut
 * at hand-out (service-api.md, "Limits" 4), so a region disabled since or dropped by the plan's
 * `max_regions` is left out, and a monitor no region serves answers none (unmonitored).
 */
async function regionsOf(ctx: TargetsCtx, row: TargetRow): Promise<RegionsT> {
  const enabled = await ctx.regions.enabled();
  const serving = new Set(regionsAtHandOut(row.regions, enabled, ctx.plan.caps.max_regions));
  const catalog = new Map(enabled.map((r) => [r.id, r]));
  const regions = row.regions.filter((id) => serving.has(id)).map((id) => {
    const r = catalog.get(id)!;
    return { id: r.id, name: r.name, city: r.city, country_code: r.country_code, continent: r.continent, latitude: r.latitude, longitude: r.longitude };
  });
  return { regions };
}

export async function getTargetRegions(ctx: TargetsCtx, id: string): Promise<RegionsT> {
  return regionsOf(ctx, await getTargetRowInOrg(ctx.db, ctx.org.id, id));
}

export async function putTargetRegions(ctx: TargetsCtx, id: string, requested: string[]): Promise<RegionsT> {
  const catalog = await ctx.regions.enabled();
  const row = await ctx.db.transaction(async (tx) => {
    const current = await getTargetRowInOrg(tx, ctx.org.id, id, 'update');
    const regions = checkRegions(current.kind, requested, catalog, ctx.plan.caps.max_regions);
    const updated = (await setTargetRegions(tx, ctx.org.id, id, regions, ctx.writeSource))!;
    await writeAudit(tx, ctx.actor, {
      action: 'target.regions_set', orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'target', entityId: id,
      details: { regions, write_source: ctx.writeSource },
    });
    return updated;
  });
  return regionsOf(ctx, row);
}
