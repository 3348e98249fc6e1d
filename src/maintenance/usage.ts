// `max_maintenance_windows` in the usage view: the account's windows not yet ended (upcoming and active).
import { registerUsageCounter } from '../plans/usage.js';
import { countAccountLiveWindows } from './store.js';

registerUsageCounter('max_maintenance_windows', (db, { accountId, now }) => countAccountLiveWindows(db, accountId, now));
