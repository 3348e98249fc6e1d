// Write-time network rules (monitoring-api.md, "Errors"): the SSRF guard on every host a probe
// would connect to, and the abuse deny-lists on URLs and domains. Probes re-check at connect time.
import type { AbuseBlockedEvent, DenyLists } from '../net/deny-lists.js';
import type { NetworkGuard } from '../net/guard.js';
import type { RdapBootstrap } from '../rdap/index.js';
import { AppError } from '../shared/errors.js';
import type { VariableSnapshot } from '../variables/index.js';
import type { CheckSpecT } from './check-specs.js';
import { parseResolver } from './dns-params.js';
import { hostOf, isPathOnly, parseHttpUrl } from './kinds.js';

export interface NetworkCtx {
  guard: Pick<NetworkGuard, 'checkHost'>;
  denyLists: DenyLists;
  /** Records an `abuse_blocked` quota event for the caller. */
  onBlocked: (event: AbuseBlockedEvent) => void;
  /** Which TLDs publish registration data (domain_expiry). */
  rdap: Pick<RdapBootstrap, 'publishesExpiryData'>;
  /** The org's variables, read at most once per request: a URL's host may come from one (checks.ts `judgedCheck`). */
  variables: () => Promise<VariableSnapshot>;
}

interface Reach { urls: Array<{ url: string; field: string }>; hosts: Array<{ host: string; field: string }>; domains: Array<{ domain: string; field: string }> }

/** Every URL, host and domain the check reaches, with the field that names it. */
function reachOf(check: CheckSpecT): Reach {
  const reach: Reach = { urls: [], hosts: [], domains: [] };
  switch (check.type) {
    case 'http': reach.urls.push({ url: check.url, field: 'check.url' }); break;
    case 'tcp': case 'ping': case 'tls_cert': reach.hosts.push({ host: check.host.trim(), field: 'check.host' }); break;
    case 'dns':
      reach.domains.push({ domain: check.domain.trim().replace(/\.$/, ''), field: 'check.domain' });
      // A custom resolver is a server the probe sends packets to: the guard judges it like any host.
      if (check.resolver) reach.hosts.push({ host: parseResolver(check.resolver).address, field: 'check.resolver' });
      break;
    case 'domain_expiry': reach.domains.push({ domain: check.domain.trim(), field: 'check.domain' }); break;
    case 'flow':
      reach.urls.push({ url: check.start_url, field: 'check.start_url' });
      check.steps.forEach((s, i) => { if (s.op === 'goto' && !isPathOnly(s.url)) reach.urls.push({ url: s.url, field: `check.steps[${i}].url` }); });
      break;
    default: break;
  }
  return reach;
}

/** Throws 400 for a blocked address (unless private targets are allowed) or a deny-listed URL or domain. */
export async function checkNetworkRules(ctx: NetworkCtx, check: CheckSpecT): Promise<void> {
  const { urls, hosts, domains } = reachOf(check);
  for (const { url, field } of urls) {
    ctx.denyLists.checkUrl(url, field, ctx.onBlocked);
    await ctx.guard.checkHost(hostOf(parseHttpUrl(url, field)), field);
  }
  for (const { host, field } of hosts) {
    ctx.denyLists.checkDomain(host, field, ctx.onBlocked);
    await ctx.guard.checkHost(host, field);
  }
  for (const { domain, field } of domains) ctx.denyLists.checkDomain(domain, field, ctx.onBlocked);
  if (check.type === 'domain_expiry') await checkExpiryPublished(ctx, check.domain.trim());
}

/**
 * A domain_expiry monitor on a TLD whose registry runs no RDAP service could never read a date.
 * When the bootstrap registry itself cannot be fetched the write is accepted (fail open): an
 * outage at IANA must not block every domain_expiry write; the probe then reports the TLD.
 */
async function checkExpiryPublished(ctx: NetworkCtx, domain: string): Promise<void> {
  if (await ctx.rdap.publishesExpiryData(domain) === false) {
    const tld = domain.slice(domain.lastIndexOf('.') + 1);
    throw new AppError(400, 'VALIDATION_FAILED', `check.domain: the registry of .${tld} publishes no expiry data (no RDAP service)`, { field: 'check.domain' });
  }
}

/**
 * A guard that judges each (host, field) once: a bulk create of 10,000 monitors on a few hosts
 * resolves each host once, not once per monitor.
 */
export function memoizedGuard(guard: NetworkCtx['guard']): NetworkCtx['guard'] {
  const seen = new Map<string, ReturnType<NetworkGuard['checkHost']>>();
  return {
    checkHost(host, field) {
      const key = `${field}\u0000${host}`;
      let outcome = seen.get(key);
      if (!outcome) seen.set(key, (outcome = guard.checkHost(host, field)));
      return outcome;
    },
  };
}
