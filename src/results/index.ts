// The results domain as other code sees it.
export { ResultWriter, type ResultFold } from './writer.js';
export { registerResultRoutes } from './routes.js';
export { resultWindow, toCheckResult } from './service.js';
export { roundTimings } from './store.js';
export { CheckResult, TestResult, type CheckResultT } from './schema.js';
export { NO_PROBE_REGION, staleAfterMsOf, type CheckResultRecord, type ResultSink } from './types.js';
export { startHistorySweep, sweepHistory } from './retention.js';
