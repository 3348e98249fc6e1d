// The enabled-region catalog, read on hot paths (every region listing, every monitor write):
// kept in memory for a few seconds and dropped at once when this node changes a region.
import type { Executor } from '../db/db.js';
import type { Clock } from '../shared/context.js';
import type { OperatorRegionT } from './schema.js';
import { listRegions } from './store.js';

const TTL_MS = 5_000;

export class RegionCatalog {
  private cached: { regions: OperatorRegionT[]; until: number } | null = null;

  constructor(private readonly db: Executor, private readonly clock: Clock) {}

  async enabled(): Promise<OperatorRegionT[]> {
    const now = this.clock.now().getTime();
    if (this.cached && this.cached.until > now) return this.cached.regions;
    const regions = await listRegions(this.db, true);
    this.cached = { regions, until: now + TTL_MS };
    return regions;
  }

  invalidate(): void {
    this.cached = null;
  }
}
