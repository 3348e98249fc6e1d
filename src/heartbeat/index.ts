// The heartbeat domain as other code sees it.
export { startHeartbeatEvaluation, evaluateHeartbeats } from './evaluate.js';
export { PingIngest } from './ingest.js';
export { mintPingTokens, pingTokenHash, pingUrl } from './ping-tokens.js';
export { PingRateLimiter } from './rate-limit.js';
export { registerHeartbeatRoutes } from './routes.js';
export { heartbeatsAfterUpdate } from './service.js';
