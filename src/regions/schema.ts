import { Type, type Static } from '@sinclair/typebox';

export const REGION_ID_PATTERN = '^[a-z0-9][a-z0-9-]{0,62}$';

const nullableString = (maxLength: number) => Type.Union([Type.String({ maxLength }), Type.Null()]);
const coordinate = (limit: number) => Type.Union([Type.Number({ minimum: -limit, maximum: limit }), Type.Null()]);

/** What every caller sees (`GET /api/v1/regions`). */
export const PublicRegion = Type.Object({
  id: Type.String(),
  name: Type.String(),
  city: Type.Union([Type.String(), Type.Null()]),
  country_code: Type.Union([Type.String(), Type.Null()]),
  continent: Type.Union([Type.String(), Type.Null()]),
  latitude: Type.Union([Type.Number(), Type.Null()]),
  longitude: Type.Union([Type.Number(), Type.Null()]),
}, { $id: 'Region', description: 'A probe region.' });

/** The operator's view adds the switches. */
export const OperatorRegion = Type.Object({
  ...PublicRegion.properties,
  enabled: Type.Boolean(),
  default_selected: Type.Boolean({ description: 'Part of the default set of a monitor created without `regions`.' }),
  flow_capable: Type.Boolean({
    description: 'Has a browser engine for flow checks. The built-in region `local` also needs `flow.enabled` on the process'
      + ' answering: without it this reads false, as placement treats it, whatever PATCH stored.',
  }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, { additionalProperties: false });

const editable = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  city: nullableString(100),
  country_code: Type.Union([Type.String({ pattern: '^[A-Z]{2}$' }), Type.Null()]),
  continent: nullableString(50),
  latitude: coordinate(90),
  longitude: coordinate(180),
  enabled: Type.Boolean(),
  default_selected: Type.Boolean(),
  flow_capable: Type.Boolean({ description: 'Stored as sent; for the built-in region `local` it applies only with `flow.enabled`.' }),
};

export const CreateRegionBody = Type.Object({
  id: Type.String({ pattern: REGION_ID_PATTERN, description: 'Lower-case id, e.g. `eu-west`.' }),
  ...editable,
  city: Type.Optional(editable.city),
  country_code: Type.Optional(editable.country_code),
  continent: Type.Optional(editable.continent),
  latitude: Type.Optional(editable.latitude),
  longitude: Type.Optional(editable.longitude),
  enabled: Type.Optional(Type.Boolean({ default: true })),
  default_selected: Type.Optional(Type.Boolean({ default: false })),
  flow_capable: Type.Optional(Type.Boolean({ default: false })),
}, { additionalProperties: false });

export const PatchRegionBody = Type.Partial(Type.Object(editable), { additionalProperties: false, minProperties: 1 });

export type CreateRegion = Static<typeof CreateRegionBody>;
export type PatchRegion = Static<typeof PatchRegionBody>;
export type OperatorRegionT = Static<typeof OperatorRegion>;
