// The notification-channels domain as other code sees it.
export { existingChannelIds } from './bindings.js';
