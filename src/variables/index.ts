// The variables domain as other code sees it.
export { registerVariableRoutes } from './routes.js';
export {
  checkReferences, countVariableUsage, findReferences, registerVariableUsage, substituteReferences,
  type ReferencedText, type VariableKind, type VariableUsageCounter,
} from './references.js';
export { NO_VARIABLES, resolveVariableValues, snapshotVariables, type OrgVariables, type VariableSnapshot } from './service.js';
export { listVariableKinds } from './store.js';
export { VARIABLE_KEY_PATTERN, VARIABLE_KEY_RE, VARIABLE_VALUE_MAX_LENGTH, Variable, type VariableT } from './schema.js';
