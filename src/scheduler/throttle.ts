// The per-host throttle (monitoring-api.md, "Limits"): at most `checker.per_host_max_inflight`
// checks in flight per (org, host, port) on this node; a tick over the cap is dropped (no result,
// no alert) and counted. RDAP has its own per-TLD cap inside the domain_expiry probe.
import type { CheckSpecT } from '../targets/check-specs.js';

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** The (host, port) a check talks to; null for kinds the throttle does not cover. */
export function hostPortOf(spec: CheckSpecT): string | null {
  switch (spec.type) {
    case 'http':
    case 'flow': {
      try {
        const url = new URL(spec.type === 'http' ? spec.url : spec.start_url);
        return `${url.hostname}:${url.port || DEFAULT_PORTS[url.protocol] || 0}`;
      } catch {
        return null;
      }
    }
    case 'tcp': return `${spec.host}:${spec.port}`;
    case 'tls_cert': return `${spec.host}:${spec.port}`;
    case 'ping': return `${spec.host}:0`;
    case 'dns': return `${spec.resolver ?? 'system'}|${spec.domain}`;
    default: return null;
  }
}

export class HostThrottle {
  private readonly inflight = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Takes a slot for the key; false when the host is at its cap. */
  acquire(key: string): boolean {
    const n = this.inflight.get(key) ?? 0;
    if (n >= this.max) return false;
    this.inflight.set(key, n + 1);
    return true;
  }

  release(key: string): void {
    const n = this.inflight.get(key) ?? 0;
    if (n <= 1) this.inflight.delete(key);
    else this.inflight.set(key, n - 1);
  }
}
