// Region rules (monitoring-api.md, "Region rules"; service-api.md, `max_regions`): the default set,
// enabled ids only, the plan cap, and none on heartbeat or manual monitors.
import type { OperatorRegionT } from '../regions/schema.js';
import { AppError, quotaExceeded } from '../shared/errors.js';
import type { CheckKind } from './constants.js';

/** Heartbeat and manual monitors are fed from outside and run on no probe. */
export const takesRegions = (kind: CheckKind): boolean => kind !== 'heartbeat' && kind !== 'manual';

/** The default-selected enabled regions, in catalog order, cut to the plan's cap. */
export function defaultRegions(kind: CheckKind, catalog: readonly OperatorRegionT[], maxRegions: number | null): string[] {
  if (!takesRegions(kind)) return [];
  const ids = catalog.filter((r) => r.default_selected).map((r) => r.id);
  return maxRegions === null ? ids : ids.slice(0, maxRegions);
}

/** Checks a requested set: ids de-duplicated, each enabled, the set within the cap. */
export function checkRegions(kind: CheckKind, requested: readonly string[], catalog: readonly OperatorRegionT[], maxRegions: number | null): string[] {
  if (!takesRegions(kind) && requested.length > 0) {
    throw new AppError(422, 'REGION_INVALID', `regions: a ${kind} monitor runs on no region`, { field: 'regions' });
  }
  const enabled = new Set(catalog.map((r) => r.id));
  const ids: string[] = [];
  requested.forEach((id, i) => {
    if (!enabled.has(id)) throw new AppError(422, 'REGION_INVALID', `regions[${i}]: "${id}" is not an enabled region`, { field: `regions[${i}]` });
    if (!ids.includes(id)) ids.push(id);
  });
  if (maxRegions !== null && ids.length > maxRegions) throw quotaExceeded('max_regions', maxRegions);
  return ids;
}
