// Check results as other code sees them.
export { ResultWriter } from './writer.js';
export { NO_PROBE_REGION, type CheckResultRecord, type ResultSink } from './types.js';
