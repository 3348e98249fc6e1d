// Abuse deny-lists (monitoring-api.md Errors; service-api.md Limits 9, Events 6), loaded from
// files at start. Two files, both one entry per line, `#` starts a comment, blank lines skipped:
//
// URL patterns: a glob over the URL *path* (query and fragment are not matched), case-insensitive.
//   - must start with `/`; `*` matches within one segment, `**` across segments (`/**/.env`);
//     every other character is literal (`?` is refused: it would mean a query).
//   - a pattern matches the whole path or any path below it: `/wp-admin` blocks `/wp-admin`
//     and `/wp-admin/install.php`, not `/wp-admin2`. A trailing `/` on a pattern is ignored.
//   - a path is tested in every form a server might read it as: as the URL parser normalised it
//     (dot segments resolved), percent-decoded with dot segments resolved again (`/%2Eenv` and
//     `/x/..%2f.env` are `/.env`), with runs of `/` collapsed (`//.env`) and without `;` segment
//     parameters (`/.env;x`, as servlet containers read them).
// Domains: a domain blocks itself and every subdomain. Lower-cased, IDNA ASCII
//   (url.domainToASCII), trailing dot ignored; wildcards and IP addresses are refused.
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { domainToASCII } from 'node:url';
import { AppError } from '../shared/errors.js';
import { parseHostLiteral } from './address-policy.js';

export interface DenyListPaths {
  urlPatterns?: string;
  domains?: string;
}

/** Shaped for services.quotaEvents (event `abuse_blocked`); the caller adds account, user, IP. */
export interface AbuseBlockedEvent {
  event: 'abuse_blocked';
  quota: 'url_pattern' | 'domain_denylist';
  details: { code: 'URL_PATTERN_BLOCKED' | 'DOMAIN_DENYLISTED'; field: string; rule: string; source: string; value: string };
}

export type OnBlocked = (event: AbuseBlockedEvent) => void;

interface Line {
  text: string;
  source: string;
}

interface UrlRule {
  pattern: string;
  source: string;
  regex: RegExp;
}

const PATTERN_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/]+$/;

export class DenyListError extends Error {
  constructor(source: string, message: string) {
    super(`${source}: ${message}`);
    this.name = 'DenyListError';
  }
}

function readEntries(path: string | undefined): Line[] {
  if (path === undefined) return [];
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch (err) {
    throw new DenyListError(path, `cannot read deny-list (${(err as Error).message})`);
  }
  return content.split(/\r?\n/).flatMap((raw, i) => {
    const text = raw.replace(/#.*$/, '').trim();
    return text === '' ? [] : [{ text, source: `${path}:${i + 1}` }];
  });
}

function compilePattern({ text, source }: Line): UrlRule {
  if (!text.startsWith('/')) throw new DenyListError(source, `pattern "${text}" must start with /`);
  if (!PATTERN_CHARS.test(text)) throw new DenyListError(source, `pattern "${text}" has a character outside a URL path`);
  if (text.includes('***')) throw new DenyListError(source, `pattern "${text}" has more than two * in a row`);
  const pattern = text.length > 1 && text.endsWith('/') ? text.slice(0, -1) : text;
  const body = pattern.split(/(\*\*|\*)/).map((part) => {
    if (part === '**') return '.*';
    if (part === '*') return '[^/]*';
    return part.replace(/[.+()$^|{}[\]\\]/g, '\\$&');
  }).join('');
  const tail = pattern === '/' ? '.*' : '(?:/.*)?';
  return { pattern, source, regex: new RegExp(`^${body}${tail}$`, 'i') };
}

function normalizeDomain({ text, source }: Line): string {
  if (/[*/:\s@]/.test(text)) throw new DenyListError(source, `"${text}" is not a domain (write the domain itself; subdomains are included)`);
  const ascii = domainToASCII(text.toLowerCase().replace(/\.$/, ''));
  const parsed = ascii === '' ? null : parseHostLiteral(ascii);
  if (parsed === null) throw new DenyListError(source, `"${text}" is not a valid domain`);
  if (parsed.kind !== 'name') throw new DenyListError(source, `"${text}" is an IP address, not a domain`);
  return parsed.name;
}

/** The forms of a URL path a server might act on (the header's list). */
function pathForms(pathname: string): string[] {
  const forms = new Set<string>();
  for (const path of [pathname, resolveDots(safeDecode(pathname))]) {
    const collapsed = path.replace(/\/{2,}/g, '/');
    for (const form of [path, collapsed]) {
      forms.add(form);
      forms.add(resolveDots(form.replace(/;[^/]*/g, '')));
    }
  }
  return [...forms];
}

/** `/a/../b` as `/b`: a decoded path's dot segments, resolved as the URL parser resolves a raw one. */
function resolveDots(path: string): string {
  try {
    // Joined, not resolved against a base: `//x` would be read as a host.
    return new URL(`http://h${path.replace(/[?#\\]/g, encodeURIComponent)}`).pathname;
  } catch {
    return path;
  }
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

function report(onBlocked: OnBlocked | undefined, event: AbuseBlockedEvent): void {
  try {
    onBlocked?.(event);
  } catch {
    // Recording must never change the answer (Events 6).
  }
}

export class DenyLists {
  private constructor(
    private readonly urlRules: readonly UrlRule[],
    private readonly domains: ReadonlyMap<string, string>,
  ) {}

  static empty(): DenyLists {
    return new DenyLists([], new Map());
  }

  /** Reads and validates both files; throws DenyListError naming `file:line` on a bad entry. */
  static load(paths: DenyListPaths): DenyLists {
    const urlRules = readEntries(paths.urlPatterns).map(compilePattern);
    const domains = new Map<string, string>();
    for (const line of readEntries(paths.domains)) domains.set(normalizeDomain(line), line.source);
    return new DenyLists(urlRules, domains);
  }

  get size(): { urlPatterns: number; domains: number } {
    return { urlPatterns: this.urlRules.length, domains: this.domains.size };
  }

  /**
   * A monitor URL: its host against the domain list (400 DOMAIN_DENYLISTED), then its path
   * against the patterns (400 URL_PATTERN_BLOCKED). An unparsable URL is left to validation.
   */
  checkUrl(url: string, field: string, onBlocked?: OnBlocked): void {
    if (!this.urlRules.length && !this.domains.size) return;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return;
    }
    this.checkDomain(parsed.hostname, field, onBlocked);
    const paths = pathForms(parsed.pathname);
    const rule = this.urlRules.find((r) => paths.some((p) => r.regex.test(p)));
    if (rule === undefined) return;
    const value = `${parsed.host}${parsed.pathname}`;
    report(onBlocked, { event: 'abuse_blocked', quota: 'url_pattern',
      details: { code: 'URL_PATTERN_BLOCKED', field, rule: rule.pattern, source: rule.source, value } });
    throw new AppError(400, 'URL_PATTERN_BLOCKED', `${field}: the URL path matches the deny-list pattern ${rule.pattern}`, { field });
  }

  /** A monitor host (name or URL hostname): 400 DOMAIN_DENYLISTED when it or a parent is listed. */
  checkDomain(host: string, field: string, onBlocked?: OnBlocked): void {
    if (!this.domains.size) return;
    const parsed = parseHostLiteral(host);
    if (parsed === null || parsed.kind !== 'name') return;
    const labels = parsed.name.split('.');
    for (let i = 0; i < labels.length; i++) {
      const candidate = labels.slice(i).join('.');
      const source = this.domains.get(candidate);
      if (source === undefined) continue;
      report(onBlocked, { event: 'abuse_blocked', quota: 'domain_denylist',
        details: { code: 'DOMAIN_DENYLISTED', field, rule: candidate, source, value: parsed.name } });
      throw new AppError(400, 'DOMAIN_DENYLISTED', `${field}: the domain ${candidate} is on the deny-list`, { field });
    }
  }
}

/** The live deny-lists; `current` is swapped whole, so a check never sees half a reload. */
export class DenyListHolder {
  current: DenyLists;
  /** Why the last reload was refused; null after a good one. */
  lastError: Error | null = null;

  constructor(private readonly paths: DenyListPaths) {
    this.current = DenyLists.load(paths);
  }

  /** Re-reads both files; on any bad entry keeps the old rules and returns false. */
  reload(): boolean {
    try {
      this.current = DenyLists.load(this.paths);
      this.lastError = null;
      return true;
    } catch (err) {
      this.lastError = err as Error;
      return false;
    }
  }
}

/**
 * With `abuse.hot_reload_enabled`, SIGHUP re-reads the deny-lists (Limits 9). Returns the
 * function that removes the handler; when disabled nothing is installed.
 */
export function installSighupReload(holder: DenyListHolder, log: Pick<Logger, 'info' | 'error'>,
  options: { enabled: boolean }): () => void {
  if (!options.enabled) return () => {};
  const onSighup = (): void => {
    if (holder.reload()) log.info({ deny_lists: holder.current.size }, 'deny-lists reloaded');
    else log.error({ err: holder.lastError }, 'deny-list reload refused; the previous rules stay in force');
  };
  process.on('SIGHUP', onSighup);
  return () => { process.off('SIGHUP', onSighup); };
}
