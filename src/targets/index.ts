// The targets domain as other code sees it.
import './usage.js';
import './holds.js';

export { registerTargetRoutes } from './routes.js';
export { rotationCheckFor } from './variable-rotation.js';
export { CheckSpec, type CheckSpecT } from './check-specs.js';
export { Target, type TargetT } from './schema.js';
export { getTargetRowInOrg, toTarget } from './service.js';
export type { TargetRow } from './store.js';
export { checkOwnMonitorIds, existingTargetIds } from './store.js';
