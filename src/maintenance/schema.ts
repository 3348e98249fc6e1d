// Maintenance windows (monitoring-api.md, "Maintenance window"; CONTRACT.md shape) as TypeBox schemas.
import { Type, type Static } from '@sinclair/typebox';
import { listOf, Pagination } from '../http/route.js';
import { nullable } from '../http/schema-helpers.js';
import { WriteSourceSchema } from '../http/write-source.js';

export const MAINTENANCE_STATUSES = ['upcoming', 'active', 'ended', 'cancelled'] as const;
export type MaintenanceStatus = (typeof MAINTENANCE_STATUSES)[number];
export const MAINTENANCE_FILTERS = ['active', 'upcoming', 'past', 'all'] as const;
export type MaintenanceFilter = (typeof MAINTENANCE_FILTERS)[number];

export const MAINTENANCE_UPDATES_MAX = 50;
export const MAINTENANCE_COMPONENTS_MAX = 1000;
export const MAINTENANCE_MESSAGE_MAX = 2000;

const fields = {
  title: Type.String({ minLength: 1, maxLength: 200, description: '1-200 characters, trimmed.' }),
  description: nullable(Type.String({ maxLength: 5000, description: 'At most 5000 characters; null clears.' })),
  starts_at: Type.String({ format: 'date-time', description: 'RFC 3339 with `Z` or an offset (answered in UTC; a leap second reads as the next second; years 0001-9999). May lie in the past: the window is then running at once.' }),
  ends_at: Type.String({ format: 'date-time', description: 'RFC 3339 like `starts_at`, after it and in the future. On a running window, a PATCH with `ends_at` at or before now ends it at the server\'s clock.' }),
  components: Type.Array(Type.String(), {
    maxItems: MAINTENANCE_COMPONENTS_MAX,
    description: `Ids of the org's monitors the window covers (at most ${MAINTENANCE_COMPONENTS_MAX}, no duplicates); \`[]\` for an announcement only. A monitor that is deleted leaves the list.`,
  }),
  suppress_alerts: Type.Boolean({ description: 'Default true: while the window runs, its monitors open no incidents and send no opened or reminder notifications (a recovery of an incident opened before the window still reaches the channels it paged).' }),
};

export const MaintenanceUpdate = Type.Object({
  id: Type.String({ format: 'uuid' }),
  message: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
}, { additionalProperties: false });

export const MaintenanceWindow = Type.Object({
  id: Type.String({ format: 'uuid' }),
  ...fields,
  status: Type.Union(MAINTENANCE_STATUSES.map((s) => Type.Literal(s)), { description: 'From the clock: `upcoming` before `starts_at`, `active` until `ends_at`, then `ended`; `cancelled` once deleted.' }),
  updates: Type.Array(MaintenanceUpdate, { description: `Oldest first; at most ${MAINTENANCE_UPDATES_MAX}.` }),
  deleted_at: nullable(Type.String({ format: 'date-time', description: 'When it was cancelled.' })),
  deleted_by: nullable(Type.String({ format: 'uuid', description: 'Who cancelled it; null once that user is purged.' })),
  write_source: WriteSourceSchema,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, { $id: 'MaintenanceWindow', additionalProperties: false, description: 'A maintenance window. Cancelled windows are kept as history.' });

export const CreateMaintenanceBody = Type.Object({
  title: fields.title,
  description: Type.Optional(fields.description),
  starts_at: fields.starts_at,
  ends_at: fields.ends_at,
  components: Type.Optional(fields.components),
  suppress_alerts: Type.Optional(fields.suppress_alerts),
}, { additionalProperties: false });

export const PatchMaintenanceBody = Type.Partial(Type.Object(fields), {
  additionalProperties: false,
  description: 'Only the fields sent change; `components` is replaced whole.',
});

export const PostMaintenanceUpdateBody = Type.Object({
  message: Type.String({ minLength: 1, maxLength: MAINTENANCE_MESSAGE_MAX, description: `1-${MAINTENANCE_MESSAGE_MAX} characters, trimmed.` }),
}, { additionalProperties: false });

export const ListMaintenanceQuery = Type.Object({
  ...Pagination,
  status: Type.Optional(Type.Union(MAINTENANCE_FILTERS.map((s) => Type.Literal(s)), {
    default: 'all',
    description: '`active`: running now, the soonest to end first. `upcoming`: not started, the soonest first. `past`: ended or cancelled, the latest first. `all` (default): every window, the latest start first.',
  })),
});

export const MaintenanceList = listOf('maintenance_windows', MaintenanceWindow);

export type MaintenanceWindowT = Static<typeof MaintenanceWindow>;
export type CreateMaintenance = Static<typeof CreateMaintenanceBody>;
export type PatchMaintenance = Static<typeof PatchMaintenanceBody>;
