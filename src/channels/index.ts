// The notification-channels domain as other code sees it.
import './usage.js';

export { existingChannelIds } from './bindings.js';
export { openConfig } from './configs.js';
export { registerChannelRoutes } from './routes.js';
export { ChannelConfig, type ChannelConfigT } from './schema.js';
