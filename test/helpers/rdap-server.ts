// A local RDAP server on 127.0.0.1: `/rdap/domain/<name>` answers RFC 9083 domain objects built from
// the records a test sets, 404 for unknown names; `/dns.json` is its RFC 9224 bootstrap registry
// pointing TLDs at it. It counts requests in flight, so a test can assert a concurrency cap.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RdapDomainRecord {
  /** RFC 3339 date of the `expiration` event; omitted means the answer has no such event. */
  expiration?: string;
  registrar?: { fn?: string; handle?: string };
  /** Served verbatim instead of a built object (for malformed answers). */
  rawBody?: string;
}

/** An RFC 9224 `services` entry: labels, then base URLs. */
export type BootstrapService = [string[], string[]];

export interface RdapServerOptions {
  /** TLDs whose bootstrap base URL ends with '/' (RFC 9224's form). */
  tlds: string[];
  /** TLDs whose base URL has no trailing slash (seen in the wild). */
  tldsWithoutSlash?: string[];
  /** More bootstrap entries, e.g. a TLD pointing at a closed port. */
  extraServices?: BootstrapService[];
}

export interface RdapServer {
  /** Base URL as the bootstrap lists it, with the trailing slash. */
  base: string;
  bootstrapUrl: string;
  /** Domain name (lower case) to record; tests add and change entries freely. */
  domains: Map<string, RdapDomainRecord>;
  /** Delay before each domain answer, ms. */
  delayMs: number;
  /** Domain requests received, with their Accept header. */
  requests: Array<{ path: string; accept: IncomingHttpHeaders['accept'] }>;
  /** Domain requests being answered now, and the most seen at once since the last reset. */
  inflight: number;
  maxInflight: number;
  /** Requests received per TLD, in flight at once (max). */
  maxInflightByTld: Map<string, number>;
  resetCounters(): void;
  close(): Promise<void>;
}

const vcard = (fn: string): unknown[] => ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', fn]]];

/** An RFC 9083 domain object; the registrant entity comes first so role matters, not position. */
export function domainObject(name: string, record: RdapDomainRecord): unknown {
  const events: Array<{ eventAction: string; eventDate: string }> = [
    { eventAction: 'registration', eventDate: '2001-05-04T10:00:00Z' },
    { eventAction: 'last changed', eventDate: '2024-01-02T03:04:05Z' },
  ];
  if (record.expiration !== undefined) events.push({ eventAction: 'expiration', eventDate: record.expiration });
  const entities: unknown[] = [{ objectClassName: 'entity', handle: 'REGISTRANT-1', roles: ['registrant'], vcardArray: vcard('Registrant Person') }];
  if (record.registrar) {
    entities.push({
      objectClassName: 'entity', roles: ['registrar'],
      ...(record.registrar.handle !== undefined && { handle: record.registrar.handle }),
      ...(record.registrar.fn !== undefined && { vcardArray: vcard(record.registrar.fn) }),
    });
  }
  return { objectClassName: 'domain', rdapConformance: ['rdap_level_0'], ldhName: name, events, entities };
}

export async function startRdapServer(options: RdapServerOptions): Promise<RdapServer> {
  let origin = '';
  const inflightByTld = new Map<string, number>();
  const state: RdapServer = {
    base: '', bootstrapUrl: '', domains: new Map(), delayMs: 0, requests: [], inflight: 0, maxInflight: 0,
    maxInflightByTld: new Map(),
    resetCounters() { state.requests.length = 0; state.maxInflight = state.inflight; state.maxInflightByTld.clear(); },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
  const bootstrap = (): unknown => ({
    version: '1.0', publication: '2026-01-01T00:00:00Z',
    services: [
      [options.tlds, [`${origin}/rdap/`]],
      ...(options.tldsWithoutSlash?.length ? [[options.tldsWithoutSlash, [`${origin}/rdap`]]] : []),
      ...(options.extraServices ?? []),
    ],
  });

  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/dns.json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(bootstrap()));
      return;
    }
    const match = /^\/rdap\/domain\/([^/]+)$/.exec(path);
    if (!match) { res.writeHead(404).end(); return; }
    const name = decodeURIComponent(match[1]!).toLowerCase();
    const tld = name.slice(name.lastIndexOf('.') + 1);
    state.requests.push({ path, accept: req.headers.accept });
    state.inflight++;
    state.maxInflight = Math.max(state.maxInflight, state.inflight);
    inflightByTld.set(tld, (inflightByTld.get(tld) ?? 0) + 1);
    state.maxInflightByTld.set(tld, Math.max(state.maxInflightByTld.get(tld) ?? 0, inflightByTld.get(tld)!));
    res.once('close', () => { state.inflight--; inflightByTld.set(tld, inflightByTld.get(tld)! - 1); });
    setTimeout(() => {
      if (res.destroyed) return; // the client gave up (a timeout test)
      const record = state.domains.get(name);
      if (!record) { res.writeHead(404, { 'content-type': 'application/rdap+json' }).end(JSON.stringify({ errorCode: 404, title: 'Not Found' })); return; }
      const body = record.rawBody ?? JSON.stringify(domainObject(name, record));
      res.writeHead(200, { 'content-type': 'application/rdap+json' }).end(body);
    }, state.delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.base = `${origin}/rdap/`;
  state.bootstrapUrl = `${origin}/dns.json`;
  return state;
}
