import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addRoute, IdParams } from '../http/route.js';
import { isObject } from '../http/validation.js';
import { CheckResult, TestResult } from '../results/index.js';
import type { Services } from '../services.js';
import { CheckSpec } from '../targets/check-specs.js';
import { targetsCtx } from '../targets/routes.js';
import { probeContextOf } from './engine.js';
import { checkNow, refuseUnprobeable, testCheck, type ChecksCtx } from './service.js';
import { CHECK_ERRORS_TEXT } from '../targets/error-texts.js';

const TAGS = ['targets'];
const UNPROBED = 'Heartbeat and manual monitors are not probed: 400 `HEARTBEAT_NOT_PROBEABLE`. Flow checks answer an `error` result: no node runs browser flows yet.';

export function registerCheckRoutes(app: FastifyInstance, services: Services): void {
  const probe = probeContextOf(services);
  const ctx = (request: FastifyRequest): ChecksCtx => {
    const { org, plan, network, sealer } = targetsCtx(services, request);
    return { db: services.db, clock: services.clock, org, plan, sealer, network, probe, results: services.results, runsFlows: services.regions.runsFlows };
  };

  addRoute(app, {
    method: 'POST', url: '/api/v1/targets/test', auth: 'user', scope: 'targets:execute', tags: TAGS,
    summary: 'Run a check spec once',
    description: `The body is a check spec (as a target's \`check\`), held to every rule a create applies, SSRF and \`{{key}}\` variables included; errors name the body's fields (\`url\`, not \`check.url\`). The check runs once from this node's region (\`local\`; a flow only with \`flow.enabled\`, else 422 \`NO_FLOW_CAPABLE_AGENT\`) and answers 200 with the result, whatever its status; nothing is stored. Counted against \`test_now_per_minute\`. ${CHECK_ERRORS_TEXT} ${UNPROBED}`,
    body: CheckSpec,
    // The kind before its fields: a heartbeat or manual spec is refused as such, even one its own schema would refuse.
    beforeValidation: async (request) => refuseUnprobeable(isObject(request.body) ? request.body.type : undefined, 'type'),
    response: { 200: TestResult },
    handler: async (request) => testCheck(ctx(request), request.body),
  });

  addRoute(app, {
    method: 'POST', url: '/api/v1/targets/:id/check-now', auth: 'user', scope: 'targets:execute', tags: TAGS,
    summary: 'Check a monitor now',
    description: `Runs the stored check once from this node's region (\`local\`; a flow only with \`flow.enabled\`, else 422 \`NO_FLOW_CAPABLE_AGENT\`) with its stored credentials and variables, whether or not the monitor is paused, writes the result to its history and answers 200 with it. A held monitor (the account is over a plan cap; see account holds) is not probed: 409 \`TARGET_HELD\`. Counted against \`check_now_per_minute\`. ${UNPROBED}`,
    params: IdParams,
    response: { 200: CheckResult },
    errors: [409],
    handler: async (request) => checkNow(ctx(request), request.params.id),
  });
}
