// The heartbeat domain as other code sees it.
export { mintPingTokens, pingTokenHash, pingUrl } from './ping-tokens.js';
