// `max_notification_channels` in the usage view: channels across the account's orgs.
import { registerUsageCounter } from '../plans/usage.js';
import { countAccountChannels } from './store.js';

registerUsageCounter('max_notification_channels', (db, { accountId }) => countAccountChannels(db, accountId));
