// The codes a monitor write can answer, named once for the OpenAPI descriptions of every route
// that takes a check spec or a whole monitor (monitoring-api.md, "Errors").

/** What a check spec that breaks a rule answers. */
export const CHECK_ERRORS_TEXT = 'A check that breaks a rule answers 400 `VALIDATION_FAILED` (scheme, host, port, day ranges, an address in a blocked range), `REDACTION_SENTINEL`, `INVALID_IP_VERSION`, `INVALID_DNS_PARAMS`, `INVALID_FLOW_PARAMS`, `URL_PATTERN_BLOCKED` or `DOMAIN_DENYLISTED`; 403 `FLOW_CHECKS_DISABLED`; 422 `UNRESOLVED_VARIABLE`, each with `field`.';

/** What a whole monitor (a check plus its own fields) that breaks a rule answers. */
export const MONITOR_ERRORS_TEXT = `${CHECK_ERRORS_TEXT} The monitor's own fields: 400 \`INVALID_ALERT_CONFIG\`, \`INVALID_INTERVAL\` (a manual monitor's); 422 \`MIN_CHECK_INTERVAL\`, \`REGION_INVALID\`, \`INVALID_REGION_POLICY\`, \`NO_FLOW_CAPABLE_AGENT\` or \`QUOTA_EXCEEDED\`.`;
