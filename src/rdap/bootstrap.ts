// The RDAP bootstrap registry (RFC 9224; IANA publishes dns.json): which RDAP servers answer for a
// TLD. domain_expiry monitors need it twice: at write time (a TLD with no RDAP service publishes no
// expiry data, so the create is refused) and in the probe (where to ask). Fetched lazily on first
// use and kept for the process lifetime, as the spec says; a failed fetch is retried after a pause.
import { readFile } from 'node:fs/promises';
import { domainToASCII, fileURLToPath } from 'node:url';
import type { Clock } from '../shared/context.js';

const FETCH_TIMEOUT_MS = 10_000;
const RETRY_AFTER_FAILURE_MS = 60_000;
/** IANA's file is ~20 KiB; anything far larger is not a bootstrap registry. */
const MAX_BYTES = 4 * 1024 * 1024;

/** Longest-suffix index over the registry's entries ("uk" answers for "co.uk" unless "co.uk" is listed). */
export type RdapServices = ReadonlyMap<string, readonly string[]>;

export class RdapUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RdapUnavailableError';
  }
}

/** Parses RFC 9224 JSON: `{services: [[["com", "net"], ["https://rdap.example/"]], ...]}`. */
export function parseBootstrap(json: unknown): RdapServices {
  const services = (json as { services?: unknown } | null)?.services;
  if (!Array.isArray(services)) throw new RdapUnavailableError('RDAP bootstrap: no "services" array');
  const index = new Map<string, string[]>();
  for (const entry of services) {
    if (!Array.isArray(entry) || !Array.isArray(entry[0]) || !Array.isArray(entry[1])) continue;
    const urls = (entry[1] as unknown[]).filter((u): u is string => typeof u === 'string' && /^https?:\/\//i.test(u));
    if (urls.length === 0) continue;
    // RFC 9224 section 4: prefer HTTPS when a service lists both.
    urls.sort((a, b) => Number(b.startsWith('https:')) - Number(a.startsWith('https:')));
    for (const label of entry[0] as unknown[]) if (typeof label === 'string') index.set(label.toLowerCase(), urls);
  }
  return index;
}

/** The RDAP base URLs for a domain by longest matching label suffix; null when no registry serves it. */
export function serversFor(services: RdapServices, domain: string): readonly string[] | null {
  const labels = domainToASCII(domain.trim()).toLowerCase().split('.');
  for (let i = 1; i < labels.length; i++) {
    const found = services.get(labels.slice(i).join('.'));
    if (found) return found;
  }
  return null;
}

export class RdapBootstrap {
  private loaded: RdapServices | null = null;
  private inflight: Promise<RdapServices> | null = null;
  private failedAt = -Infinity;

  constructor(private readonly url: string, private readonly clock: Clock) {}

  /** The registry, fetched once; throws `RdapUnavailableError` when it cannot be had now. */
  async services(): Promise<RdapServices> {
    if (this.loaded) return this.loaded;
    if (this.clock.now().getTime() - this.failedAt < RETRY_AFTER_FAILURE_MS) {
      throw new RdapUnavailableError(`RDAP bootstrap ${this.url} failed recently; retrying later`);
    }
    this.inflight ??= this.fetch().then(
      (services) => { this.loaded = services; return services; },
      (err: unknown) => { this.failedAt = this.clock.now().getTime(); throw err; },
    ).finally(() => { this.inflight = null; });
    return this.inflight;
  }

  /**
   * Whether the domain's registry publishes expiry data: it does when the bootstrap names an RDAP
   * service for its TLD. null when the registry cannot be had now (the caller decides; see checks).
   */
  async publishesExpiryData(domain: string): Promise<boolean | null> {
    try {
      return serversFor(await this.services(), domain) !== null;
    } catch (err) {
      if (err instanceof RdapUnavailableError) return null;
      throw err;
    }
  }

  /** http(s) as IANA serves it, or a `file:` URL for an air-gapped deployment's local copy. */
  private async read(): Promise<string> {
    if (this.url.startsWith('file:')) return readFile(fileURLToPath(this.url), 'utf8');
    const res = await fetch(this.url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return res.text();
  }

  private async fetch(): Promise<RdapServices> {
    let body: string;
    try {
      body = await this.read();
    } catch (err) {
      throw new RdapUnavailableError(`RDAP bootstrap ${this.url}: ${(err as Error).message}`, { cause: err });
    }
    if (body.length > MAX_BYTES) throw new RdapUnavailableError(`RDAP bootstrap ${this.url}: larger than ${MAX_BYTES} bytes`);
    try {
      return parseBootstrap(JSON.parse(body));
    } catch (err) {
      if (err instanceof RdapUnavailableError) throw err;
      throw new RdapUnavailableError(`RDAP bootstrap ${this.url}: not JSON`, { cause: err });
    }
  }
}
