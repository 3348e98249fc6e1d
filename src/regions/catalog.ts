// The enabled-region catalog, read on hot paths (every region listing, every monitor write):
// kept in memory for a few seconds and dropped at once when this node changes a region.
// The region the built-in runner serves runs flows only where this process may (service-api.md,
// `max_flow_checks`: "flows also need `flow.enabled` on the running process"), whatever its row says.
import type { Executor } from '../db/db.js';
import type { Clock } from '../shared/context.js';
import type { OperatorRegionT } from './schema.js';
import { listRegions } from './store.js';

const TTL_MS = 5_000;
/** The region the built-in probe runner serves (CONTRACT.md: a fresh install has this one). */
export const LOCAL_REGION = 'local';

export class RegionCatalog {
  private cached: { regions: OperatorRegionT[]; until: number } | null = null;

  constructor(
    private readonly db: Executor,
    private readonly clock: Clock,
    private readonly builtIn: { regionId: string; runsFlows: boolean },
  ) {}

  async enabled(): Promise<OperatorRegionT[]> {
    const now = this.clock.now().getTime();
    if (this.cached && this.cached.until > now) return this.cached.regions;
    const regions = (await listRegions(this.db, true)).map((r) => this.effective(r));
    this.cached = { regions, until: now + TTL_MS };
    return regions;
  }

  /** The region as this process places monitors on it: the one rule every view of a region applies. */
  effective(region: OperatorRegionT): OperatorRegionT {
    const { regionId, runsFlows } = this.builtIn;
    return region.id === regionId && region.flow_capable && !runsFlows ? { ...region, flow_capable: false } : region;
  }

  /** Whether this process runs flow checks (`flow.enabled`). */
  get runsFlows(): boolean {
    return this.builtIn.runsFlows;
  }

  invalidate(): void {
    this.cached = null;
  }
}
