import type { Executor } from '../db/db.js';
import type { CreateRegion, OperatorRegionT, PatchRegion } from './schema.js';

interface RegionRow {
  id: string; name: string; city: string | null; country_code: string | null; continent: string | null;
  latitude: number | null; longitude: number | null; enabled: boolean; default_selected: boolean; flow_capable: boolean;
  created_at: Date; updated_at: Date;
}

export function toRegion(row: RegionRow): OperatorRegionT {
  return { ...row, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() };
}

export async function listRegions(db: Executor, onlyEnabled: boolean): Promise<OperatorRegionT[]> {
  const rows = await db.query<RegionRow>(`SELECT * FROM regions ${onlyEnabled ? 'WHERE enabled' : ''} ORDER BY id`);
  return rows.map(toRegion);
}

export async function getRegion(db: Executor, id: string): Promise<OperatorRegionT | null> {
  const [row] = await db.query<RegionRow>('SELECT * FROM regions WHERE id = $1', [id]);
  return row ? toRegion(row) : null;
}

/** null when the id is taken. */
export async function insertRegion(db: Executor, r: CreateRegion): Promise<OperatorRegionT | null> {
  const [row] = await db.query<RegionRow>(
    `INSERT INTO regions (id, name, city, country_code, continent, latitude, longitude, enabled, default_selected, flow_capable)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING RETURNING *`,
    [r.id, r.name, r.city ?? null, r.country_code ?? null, r.continent ?? null, r.latitude ?? null, r.longitude ?? null,
      r.enabled ?? true, r.default_selected ?? false, r.flow_capable ?? false]);
  return row ? toRegion(row) : null;
}

const PATCHABLE = ['name', 'city', 'country_code', 'continent', 'latitude', 'longitude', 'enabled', 'default_selected', 'flow_capable'] as const;

export async function updateRegion(db: Executor, id: string, patch: PatchRegion): Promise<OperatorRegionT | null> {
  const keys = PATCHABLE.filter((k) => k in patch);
  const [row] = await db.query<RegionRow>(
    `UPDATE regions SET ${keys.map((k, i) => `${k} = $${i + 2}`).join(', ')}, updated_at = now() WHERE id = $1 RETURNING *`,
    [id, ...keys.map((k) => patch[k])]);
  return row ? toRegion(row) : null;
}
