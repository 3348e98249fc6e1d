// The SSRF guard: the targets API asks it at write time, probes ask it again at connect time
// (monitoring-api.md, Errors: "target address in a blocked range ...; hostnames re-checked after
// DNS resolution"). Connect time is what protects against DNS rebinding; write time gives the
// customer an early, clear 400.
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { AppError } from '../shared/errors.js';
import { blockedRangeOf, parseHostLiteral } from './address-policy.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Every A and AAAA address of a name. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export interface NetworkGuardOptions {
  /** `security.allow_private_targets`: every address passes. */
  allowPrivate: boolean;
  /** Defaults to the process resolver (getaddrinfo, so /etc/hosts counts). */
  resolver?: Resolver;
  /** Write-time resolution budget; a slower answer counts as "does not resolve yet". */
  resolveTimeoutMs?: number;
}

export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

/** Connect-time refusal; probes map `code` to a result reason (failures are data there). */
export class BlockedAddressError extends Error {
  readonly code = 'EBLOCKEDADDRESS';
  constructor(readonly hostname: string, reason: string) {
    super(`connection to ${hostname} refused by the network guard: ${reason}`);
    this.name = 'BlockedAddressError';
  }
}

const isLocalhostName = (name: string): boolean => name === 'localhost' || name.endsWith('.localhost');

function refusal(field: string, message: string): AppError {
  return new AppError(400, 'VALIDATION_FAILED', `${field}: ${message}`, { field });
}

function lookupError(code: string, hostname: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${message} (${hostname})`), { code, hostname });
}

export class NetworkGuard {
  readonly allowPrivate: boolean;
  private readonly resolver: Resolver;
  private readonly resolveTimeoutMs: number;

  constructor(options: NetworkGuardOptions) {
    this.allowPrivate = options.allowPrivate;
    this.resolver = options.resolver ?? systemResolver;
    this.resolveTimeoutMs = options.resolveTimeoutMs ?? 3000;
  }

  /**
   * Write-time check of a monitor's host; throws 400 VALIDATION_FAILED naming `field`.
   * `addresses` lists what was judged: the literal, or the name's resolved addresses.
   * A name that does not resolve (or not within the budget) is accepted with no addresses:
   * its DNS may be set up after the monitor, and the connect-time guard re-checks every run.
   * With `allowPrivate` nothing is refused and names are not resolved.
   */
  async checkHost(host: string, field: string): Promise<{ addresses: string[] }> {
    const literal = parseHostLiteral(host);
    if (literal === null) throw refusal(field, `"${host}" is not a valid host`);
    if (literal.kind !== 'name') {
      const range = this.allowPrivate ? null : blockedRangeOf(literal.address);
      if (range !== null) throw refusal(field, `target address ${literal.address} is in a blocked range (${range})`);
      return { addresses: [literal.address] };
    }
    if (this.allowPrivate) return { addresses: [] };
    if (isLocalhostName(literal.name)) throw refusal(field, `"${host}" is a loopback name`);
    const addresses = (await this.resolveWithinBudget(literal.name)).map((a) => a.address);
    for (const address of addresses) {
      const range = blockedRangeOf(address);
      if (range !== null) {
        throw refusal(field, `"${host}" resolves to ${address}, which is in a blocked range (${range})`);
      }
    }
    return { addresses };
  }

  /**
   * Connect-time resolution: the addresses of `host` a probe may connect to, blocked ones
   * removed, optionally only one family. Throws BlockedAddressError when none is allowed;
   * resolver errors (ENOTFOUND ...) pass through.
   */
  async resolveForConnect(host: string, family: 0 | 4 | 6 = 0): Promise<ResolvedAddress[]> {
    const literal = parseHostLiteral(host);
    if (literal === null) throw new BlockedAddressError(host, 'not a valid host');
    let candidates: ResolvedAddress[];
    if (literal.kind === 'name') {
      if (!this.allowPrivate && isLocalhostName(literal.name)) throw new BlockedAddressError(host, 'loopback name');
      candidates = await this.resolver(literal.name);
    } else {
      candidates = [{ address: literal.address, family: literal.kind === 'ipv4' ? 4 : 6 }];
    }
    const wanted = candidates.filter((a) => family === 0 || a.family === family);
    if (wanted.length === 0) throw lookupError('ENOTFOUND', host, `no IPv${family} address`);
    if (this.allowPrivate) return wanted;
    const allowed = wanted.filter((a) => blockedRangeOf(a.address) === null);
    if (allowed.length === 0) {
      const ranges = wanted.map((a) => `${a.address} (${blockedRangeOf(a.address)})`).join(', ');
      throw new BlockedAddressError(host, `every address is in a blocked range: ${ranges}`);
    }
    return allowed;
  }

  private async resolveWithinBudget(name: string): Promise<ResolvedAddress[]> {
    let timer: NodeJS.Timeout | undefined;
    const budget = new Promise<ResolvedAddress[]>((resolve) => {
      timer = setTimeout(() => resolve([]), this.resolveTimeoutMs);
    });
    try {
      return await Promise.race([this.resolver(name).catch(() => []), budget]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function familyOf(option: number | 'IPv4' | 'IPv6' | undefined): 0 | 4 | 6 {
  if (option === 4 || option === 'IPv4') return 4;
  if (option === 6 || option === 'IPv6') return 6;
  return 0;
}

/**
 * A `lookup` for net.connect / http.request / tls.connect that answers only with addresses the
 * guard allows, so a name that rebinds to a blocked address after the write-time check is still
 * refused (error code EBLOCKEDADDRESS). Node does not call `lookup` for an IP literal host:
 * callers pass literals through `guard.resolveForConnect` first.
 */
export function pinnedLookup(guard: NetworkGuard): LookupFunction {
  return (hostname, options, callback) => {
    guard.resolveForConnect(hostname, familyOf(options.family)).then(
      (addresses) => {
        if (options.all) callback(null, addresses.map((a) => ({ address: a.address, family: a.family })));
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}
