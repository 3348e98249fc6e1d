// The checks domain as other code sees it: one-shot checks and the engine of scheduled ones.
export { registerCheckRoutes } from './routes.js';
export { DEFAULT_LEASE_TTL_MS, startCheckEngine, type EngineOptions } from './engine.js';
