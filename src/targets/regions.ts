// Region rules (monitoring-api.md, "Region rules"; service-api.md, `max_regions`): the default set,
// enabled ids only, the plan cap, none on heartbeat or manual monitors, and a flow only where a
// browser engine runs (the set is clamped to flow-capable regions; none left is 422).
import type { OperatorRegionT } from '../regions/schema.js';
import { AppError, quotaExceeded } from '../shared/errors.js';
import type { CheckKind } from './constants.js';

/** Heartbeat and manual monitors are fed from outside and run on no probe. */
export const takesRegions = (kind: CheckKind): boolean => kind !== 'heartbeat' && kind !== 'manual';

const cut = (ids: string[], maxRegions: number | null): string[] => (maxRegions === null ? ids : ids.slice(0, maxRegions));

function noFlowAgent(): AppError {
  return new AppError(422, 'NO_FLOW_CAPABLE_AGENT', 'regions: none of these regions has a browser engine for flow checks', { field: 'regions' });
}

/** A flow keeps only flow-capable regions; none left is 422 `NO_FLOW_CAPABLE_AGENT`. */
export function clampFlow(kind: CheckKind, ids: string[], catalog: readonly OperatorRegionT[]): string[] {
  if (kind !== 'flow') return ids;
  const capable = new Set(catalog.filter((r) => r.flow_capable).map((r) => r.id));
  const kept = ids.filter((id) => capable.has(id));
  if (kept.length === 0) throw noFlowAgent();
  return kept;
}

/**
 * The default-selected enabled regions, in catalog order, cut to the plan's cap. A flow takes the
 * flow-capable ones among them, or else any flow-capable region. None to take (no default region
 * enabled, or a cap of 0) is refused, never a monitor probed from nowhere.
 */
export function defaultRegions(kind: CheckKind, catalog: readonly OperatorRegionT[], maxRegions: number | null): string[] {
  if (!takesRegions(kind)) return [];
  const defaults = catalog.filter((r) => r.default_selected);
  let chosen = defaults;
  if (kind === 'flow') {
    chosen = defaults.some((r) => r.flow_capable) ? defaults.filter((r) => r.flow_capable) : catalog.filter((r) => r.flow_capable);
    if (chosen.length === 0) throw noFlowAgent();
  }
  // As an empty set named outright: a probed monitor must run somewhere.
  if (chosen.length === 0) {
    throw new AppError(422, 'REGION_INVALID', 'regions: no enabled region is selected by default; name the regions to probe from', { field: 'regions' });
  }
  if (maxRegions === 0) throw quotaExceeded('max_regions', 0, {}, 'regions');
  return cut(chosen.map((r) => r.id), maxRegions);
}

/** Checks a requested set: ids de-duplicated, each enabled, clamped for a flow, the set within the cap. */
export function checkRegions(kind: CheckKind, requested: readonly string[], catalog: readonly OperatorRegionT[], maxRegions: number | null): string[] {
  if (!takesRegions(kind) && requested.length > 0) {
    throw new AppError(422, 'REGION_INVALID', `regions: a ${kind} monitor runs on no region`, { field: 'regions' });
  }
  // Only heartbeat and manual monitors "may name none": an empty set would probe from nowhere.
  if (takesRegions(kind) && requested.length === 0) {
    throw new AppError(422, 'REGION_INVALID', `regions: a ${kind} monitor needs at least one region`, { field: 'regions' });
  }
  const enabled = new Set(catalog.map((r) => r.id));
  const ids: string[] = [];
  requested.forEach((id, i) => {
    if (!enabled.has(id)) throw new AppError(422, 'REGION_INVALID', `regions[${i}]: "${id}" is not an enabled region`, { field: `regions[${i}]` });
    if (!ids.includes(id)) ids.push(id);
  });
  const kept = clampFlow(kind, ids, catalog);
  if (maxRegions !== null && kept.length > maxRegions) throw quotaExceeded('max_regions', maxRegions, {}, 'regions');
  return kept;
}

/**
 * Regions cut to the plan's cap: default-selected first, then by id (issue 4). Regions no longer
 * enabled are dropped; a monitor left with none is unmonitored (the caller reports it).
 */
export function regionsAtHandOut(stored: readonly string[], catalog: readonly OperatorRegionT[], maxRegions: number | null): string[] {
  const enabled = new Map(catalog.map((r) => [r.id, r]));
  const kept = stored.filter((id) => enabled.has(id));
  kept.sort((a, b) => Number(enabled.get(b)!.default_selected) - Number(enabled.get(a)!.default_selected) || (a < b ? -1 : a > b ? 1 : 0));
  return cut(kept, maxRegions);
}
