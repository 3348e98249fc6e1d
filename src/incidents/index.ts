// The incidents domain as other code sees it.
export { incidentFold } from './engine.js';
export { registerIncidentRoutes } from './routes.js';
export { registerAlertActionRoutes } from './action-routes.js';
export { ACK_BUTTON_KINDS, mintAcknowledgeLink } from './alert-actions.js';
export { closeWaitedRecoveries } from './recovery-wait.js';
export { endIncidentsOfDeleted } from './monitor-deleted.js';
export { rescheduleReminders } from './reminders-changed.js';
