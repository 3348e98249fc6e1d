// The probes by kind: the one place that knows which kinds this build can probe. The scheduler runs
// only these; test and check-now answer for the others with an `error` result naming what is missing.
import type { CheckSpecT } from '../targets/check-specs.js';
import type { CheckKind } from '../targets/constants.js';
import { dnsProbe } from './dns.js';
import { domainExpiryProbe } from './domain-expiry.js';
import { httpProbe } from './http.js';
import { maskSecrets, secretTextsOf } from './mask-secrets.js';
import { pingProbe } from './ping.js';
import { tcpProbe } from './tcp.js';
import { tlsCertProbe } from './tls-cert.js';
import type { Probe, ProbeContext, ProbeResult } from './types.js';

export type { ProbeContext, ProbeResult } from './types.js';
export { runnableSpec, type RunnableSpec } from './resolve-spec.js';

type SpecOf<K extends CheckKind> = Extract<CheckSpecT, { type: K }>;
type Registry = { [K in CheckKind]?: Probe<SpecOf<K>> };

const PROBES: Registry = {
  http: httpProbe,
  tcp: tcpProbe,
  ping: pingProbe,
  dns: dnsProbe,
  tls_cert: tlsCertProbe,
  domain_expiry: domainExpiryProbe,
};

/** Kinds a probe serves here. Heartbeat and manual are fed from outside; flow comes later. */
export const PROBED_KINDS: ReadonlySet<CheckKind> = new Set(Object.keys(PROBES) as CheckKind[]);

/**
 * Runs the kind's probe; never throws (a probe's own bug becomes an `error` result). The result
 * shows the check's credentials and secret values as `***`, wherever the target echoed them.
 */
export async function runProbe(spec: CheckSpecT, ctx: ProbeContext): Promise<ProbeResult> {
  const probe = PROBES[spec.type] as Probe<CheckSpecT> | undefined;
  if (!probe) return { status: 'error', duration_ms: 0, error: `${spec.type} checks are not available on this node yet` };
  const started = performance.now();
  let result: ProbeResult;
  try {
    result = await probe(spec, ctx);
  } catch (err) {
    result = { status: 'error', duration_ms: Math.round(performance.now() - started), error: `internal error: ${(err as Error).message}` };
  }
  return maskSecrets(result, secretTextsOf(spec, ctx.secretParts?.values));
}
