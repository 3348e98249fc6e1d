// Manual monitors as other code sees them.
export { registerManualRoutes } from './routes.js';
export { manualStates, restateManualState, resultOfState } from './service.js';
