import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { addRoute } from '../http/route.js';
import type { Services } from '../services.js';
import { AppError, notFound } from '../shared/errors.js';
import { requiredText } from '../shared/text.js';
import { CreateRegionBody, OperatorRegion, PatchRegionBody, PublicRegion, REGION_ID_PATTERN, type PatchRegion } from './schema.js';
import { getRegion, insertRegion, listRegions, updateRegion } from './store.js';

const RegionParams = Type.Object({ id: Type.String({ pattern: REGION_ID_PATTERN }) });

/** Every tenant reads these texts: stored trimmed; a blank name is refused, a blank city or continent is none. */
function tidy<T extends PatchRegion>(body: T): T {
  const out = { ...body };
  if (out.name !== undefined) out.name = requiredText(out.name, 'name');
  for (const key of ['city', 'continent'] as const) {
    const value = out[key];
    if (typeof value === 'string') out[key] = value.trim() || null;
  }
  return out;
}

export function registerRegionRoutes(app: FastifyInstance, services: Services): void {
  addRoute(app, {
    method: 'GET', url: '/api/v1/regions', auth: 'user', orgScoped: false, tags: ['regions'],
    summary: 'List enabled probe regions',
    response: { 200: Type.Object({ regions: Type.Array(PublicRegion) }) },
    handler: async () => ({ regions: await services.regions.enabled() }),
  });

  addRoute(app, {
    method: 'GET', url: '/operator/regions', auth: 'operator', tags: ['operator'],
    summary: 'List every region, enabled or not',
    response: { 200: Type.Object({ regions: Type.Array(OperatorRegion) }) },
    handler: async () => ({ regions: (await listRegions(services.db, false)).map((r) => services.regions.effective(r)) }),
  });

  addRoute(app, {
    method: 'POST', url: '/operator/regions', auth: 'operator', tags: ['operator'], errors: [409],
    summary: 'Create a region', body: CreateRegionBody,
    description: 'Answers 201 with `Location`. An id the catalog already holds is 409 `REGION_EXISTS` naming `id`. `name`, `city` and `continent` are stored trimmed: a blank name is 400 `VALIDATION_FAILED`, a blank city or continent is null.',
    location: '/operator/regions', response: { 201: OperatorRegion },
    handler: async (request) => {
      const region = await insertRegion(services.db, tidy(request.body));
      if (!region) throw new AppError(409, 'REGION_EXISTS', `region ${request.body.id} exists`, { field: 'id' });
      services.regions.invalidate();
      return services.regions.effective(region);
    },
  });

  addRoute(app, {
    method: 'GET', url: '/operator/regions/:id', auth: 'operator', tags: ['operator'],
    summary: 'Get a region', params: RegionParams,
    response: { 200: OperatorRegion },
    handler: async (request) => {
      const region = await getRegion(services.db, request.params.id);
      if (!region) throw notFound('region');
      return services.regions.effective(region);
    },
  });

  addRoute(app, {
    method: 'PATCH', url: '/operator/regions/:id', auth: 'operator', tags: ['operator'],
    summary: 'Edit a region (name, place, enabled, default_selected, flow_capable)', params: RegionParams, body: PatchRegionBody,
    response: { 200: OperatorRegion },
    handler: async (request) => {
      const region = await updateRegion(services.db, request.params.id, tidy(request.body));
      if (!region) throw notFound('region');
      services.regions.invalidate();
      // The row keeps what was sent; the answer shows what placement will see, as GET does.
      return services.regions.effective(region);
    },
  });
}
