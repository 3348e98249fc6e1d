// What targets add to the usage view and to variables' `used_by`; registered once, at import.
import { registerUsageCounter } from '../plans/usage.js';
import { registerVariableUsage } from '../variables/index.js';
import { countAccountTargets, countTargetsReferencing, mostRegionsOfAMonitor } from './store.js';

registerUsageCounter('max_targets', (db, { accountId }) => countAccountTargets(db, accountId));
registerUsageCounter('max_flow_checks', (db, { accountId }) => countAccountTargets(db, accountId, 'flow'));
registerUsageCounter('max_regions', (db, { accountId }) => mostRegionsOfAMonitor(db, accountId));
registerVariableUsage(countTargetsReferencing);
