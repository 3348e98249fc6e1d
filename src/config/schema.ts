// Every configuration key Keepwatch reads, with its type, default and rule.
// The loader, the README reference and the boot checks all read this one table.
import { PLAN_IDS, PLAN_NUMERIC_COLUMNS, PLAN_VALUE_MAX } from '../plans/catalog.js';

export type KeyType = 'boolean' | 'integer' | 'string' | 'string[]';

export interface KeySpec {
  type: KeyType;
  default?: unknown;
  /** Smallest accepted integer. Quotas, rates and intervals use 1 (service-api.md Limits 8). */
  min?: number;
  /** Largest accepted integer: a port's range, or what a PostgreSQL `integer` column holds. */
  max?: number;
  /** Accepted string values. */
  oneOf?: readonly string[];
  /** Secrets have no default and are never printed. */
  secret?: boolean;
  /** Extra environment variable names, checked before the KEEPWATCH_ form. */
  envAliases?: readonly string[];
  /** A string that must be a URL of one of these schemes; see UrlRule. */
  url?: UrlRule;
  description: string;
}

export interface UrlRule {
  /** Accepted schemes, colon included (`https:`), as `URL.protocol` reads them. */
  schemes: readonly string[];
  /** An origin only: no path but `/`, no query, fragment or credentials; stored as the bare origin. */
  origin?: boolean;
  /** What the refusal says is expected, with an example. */
  expected: string;
}

const PORT_MAX = 65_535;

const AUTH_METHODS = ['magic_link', 'passkey', 'forge_a', 'idp_b', 'idp_c', 'forge_d'] as const;

const BASE_KEYS: Record<string, KeySpec> = {
  'http.port': { type: 'integer', default: 8080, min: 0, max: PORT_MAX, envAliases: ['PORT'], description: `TCP port of the API and pages (env \`PORT\`), 0..${PORT_MAX}.` },
  'http.host': { type: 'string', default: '127.0.0.1', envAliases: ['HOST'], description: 'Address to listen on (env `HOST`).' },
  'http.trust_proxy': { type: 'boolean', default: false, description: 'Take the client address from `X-Forwarded-For` (set behind a reverse proxy).' },
  data_dir: { type: 'string', default: './data', description: 'Directory of the embedded store and generated secrets (env `KEEPWATCH_DATA_DIR`).' },
  database_url: { type: 'string', envAliases: ['DATABASE_URL'], secret: true, description: 'PostgreSQL URL (env `DATABASE_URL`); unset means the embedded PGlite store in `data_dir`.' },
  'pglite.shared_buffers_mb': { type: 'integer', default: 32, min: 4, description: 'Buffer pool of the embedded store, in MB. It lives in the process (a WASM heap that never shrinks), so it is most of an embedded node\'s memory; pages it misses are read from the OS page cache.' },
  'deployment.mode': { type: 'string', default: 'self_hosted', oneOf: ['self_hosted', 'hosted'], description: 'A self-hosted install has every plan feature whatever its plan row says.' },
  default_plan: { type: 'string', default: 'team', oneOf: PLAN_IDS, description: 'Plan of accounts seeded on a self-hosted install; applies only at first-run seeding.' },
  plan_cache_ttl_secs: { type: 'integer', default: 300, min: 1, description: 'Plan changes become visible within this many seconds on other nodes.' },
  'log.level': { type: 'string', default: 'info', oneOf: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], description: 'pino log level.' },
  'metrics.enabled': { type: 'boolean', default: true, description: 'Serve Prometheus metrics at `/metrics` on a separate listener.' },
  'metrics.port': { type: 'integer', default: 9464, min: 0, max: PORT_MAX, description: `Port of the metrics listener, 0..${PORT_MAX}.` },
  'metrics.host': { type: 'string', default: '127.0.0.1', description: 'Address of the metrics listener.' },
  'security.allow_private_targets': { type: 'boolean', default: false, description: 'Allow monitors to reach loopback, private, link-local and reserved addresses.' },
  'security.credentials_kek_base64': { type: 'string', secret: true, description: 'Base64 of a 32-byte key sealing stored credentials and secrets (AES-256-GCM); generated into `data_dir/credentials-kek` when unset. Nodes sharing a PostgreSQL store must set the same one.' },
  'checker.enabled': { type: 'boolean', default: true, description: 'Run scheduled checks and heartbeat evaluation on this node (`keepwatch serve`). False makes an API-only node; the nodes that run checks share the work through leases on the store.' },
  'checker.per_host_max_inflight': { type: 'integer', default: 2, min: 1, description: "Checks in flight per (org, host, port), counted by each node (with several nodes sharing the monitors of one host, up to this many on each); ticks over the cap are dropped (no result, no alert), and the dropped monitor's slot moves by 0.382 of its interval so that a slot beside busy ones is not dropped every time." },
  'checker.rdap_max_inflight': { type: 'integer', default: 4, min: 1, description: 'RDAP requests in flight per TLD.' },
  'checker.rdap_bootstrap_url': { type: 'string', default: 'https://data.iana.org/rdap/dns.json', url: { schemes: ['http:', 'https:', 'file:'], expected: 'an http(s) URL, or a file: URL such as file:///etc/keepwatch/rdap-dns.json' }, description: 'RDAP bootstrap registry (RFC 9224) for domain_expiry checks: an http(s) URL, or a `file:` URL naming a local copy for air-gapped deployments. Fetched on first use and kept for the process lifetime.' },
  'flow.enabled': { type: 'boolean', default: false, description: 'This process may run browser flow checks (needs Chromium). Off, the built-in region `local` takes no flow monitor (422 `NO_FLOW_CAPABLE_AGENT` unless another flow-capable region serves it).' },
  'auth.public_base_url': { type: 'string', url: { schemes: ['http:', 'https:'], origin: true, expected: 'an http(s) origin such as https://status.example.com (no path: the service answers at the root)' }, description: 'Public origin of the service, http(s) (`https://status.example.com`; a trailing slash is dropped, a path refused: the service answers at the root): links, ping URLs and the passkey relying party. Unset: `http://{http.host}:{http.port}`, a wildcard or loopback host written `localhost` and an IPv6 one in brackets (`http://localhost:8080` with the defaults; `PORT=9000` gives `http://localhost:9000`). Behind a proxy or on a public name, set it.' },
  'auth.fingerprint_salt': { type: 'string', secret: true, description: 'HMAC key for stored IP and User-Agent hashes; generated into `data_dir` when unset.' },
  'auth.fingerprint_salt_rotate': { type: 'boolean', default: false, description: 'Allow booting with a salt other than the one the store was first used with.' },
  'auth.enabled_methods': { type: 'string[]', default: ['magic_link', 'passkey'], oneOf: AUTH_METHODS, description: 'Sign-in methods offered.' },
  'auth.open_signup': { type: 'boolean', default: true, description: 'Unknown addresses may sign up; off makes the deployment invite-only.' },
  'auth.service_name': { type: 'string', default: 'keepwatch', description: 'Value cookie-authenticated mutations must send in `X-Requested-With`.' },
  'auth.session_cookie_name': { type: 'string', default: '_sm_session', description: 'Session cookie name.' },
  'auth.token_cache_ttl_secs': { type: 'integer', default: 30, min: 1, description: 'How long a verified API token is trusted without reading its row again (argon2 runs again only if the row\'s hash changed).' },
  'auth.magic_link.expiry_minutes': { type: 'integer', default: 15, min: 1, description: 'Magic-link lifetime.' },
  'auth.magic_link.rate_limit_seconds': { type: 'integer', default: 60, min: 0, description: 'One outgoing magic-link mail per address per window; 0 disables.' },
  'auth.gitlab.base_url': { type: 'string', url: { schemes: ['https:'], origin: true, expected: 'an https origin such as https://gitlab.example.com (no path; plain HTTP is refused)' }, description: 'https origin of the self-hosted forge (provider `forge_d`), e.g. `https://gitlab.example.com`; plain HTTP and a path are refused.' },
  'operator.secret': { type: 'string', secret: true, description: 'Bearer secret of the operator surface; unset and `operator.auto_secret` off means the surface is 404.' },
  'operator.auto_secret': { type: 'boolean', default: true, description: 'When `operator.secret` is unset, generate one into `data_dir/operator-secret` (mode 0600).' },
  'mail.smtp_url': { type: 'string', secret: true, url: { schemes: ['smtp:', 'smtps:'], expected: 'an smtp:// or smtps:// URL such as smtp://user:password@mail.example.com:587' }, description: 'SMTP server: `smtp://[user:password@]host[:port]`, or `smtps://` for TLS from the first byte; unset writes outgoing mail to the log.' },
  'notifications.lease_secs': { type: 'integer', default: 60, min: 1, description: 'How long a claimed notification is left to its sender; a node that dies mid-send leaves it to be delivered again (same idempotency key) after this.' },
  'sms.provider_url': { type: 'string', url: { schemes: ['http:', 'https:'], expected: 'an http(s) URL such as https://sms-gateway.example.com/send' }, description: 'SMS gateway, an http(s) URL: each alert is a JSON POST `{"to": "+E.164", "body": "..."}` here (an adapter in front of Twilio, Vonage...); unset: SMS channels record their alerts as undeliverable.' },
  'sms.provider_token': { type: 'string', secret: true, description: 'Bearer token sent to `sms.provider_url`.' },
  'support.mail_to': { type: 'string', description: 'Where `POST /api/v1/support` requests are mailed (they are stored either way).' },
  'mail.from': { type: 'string', default: 'Keepwatch <keepwatch@localhost>', description: 'Sender of outgoing mail.' },
  'abuse.url_patterns_file': { type: 'string', description: 'Recon-path deny-list: one glob per line over the URL path (`/.env`, `/wp-admin/**`), `#` comments; a match is 400 `URL_PATTERN_BLOCKED`.' },
  'abuse.domain_denylist_file': { type: 'string', description: 'Domain deny-list: one domain per line, covering its subdomains; a match is 400 `DOMAIN_DENYLISTED`.' },
  'abuse.hot_reload_enabled': { type: 'boolean', default: false, description: 'SIGHUP re-reads the deny-lists.' },
  'rate_limit.sync_interval_ms': { type: 'integer', default: 1000, min: 1, description: 'How often a node shares its rate-budget counts through the store.' },
};

/** `plans.<plan>.<column>` keys let a self-hoster change a seeded plan; applied at every boot. */
function planKeys(): Record<string, KeySpec> {
  const keys: Record<string, KeySpec> = {};
  for (const plan of PLAN_IDS) {
    for (const column of PLAN_NUMERIC_COLUMNS) {
      keys[`plans.${plan}.${column}`] = { type: 'integer', min: 1, max: PLAN_VALUE_MAX, description: `Override of \`${column}\` on plan \`${plan}\`.` };
    }
  }
  return keys;
}

export const CONFIG_KEYS: Readonly<Record<string, KeySpec>> = Object.freeze({ ...BASE_KEYS, ...planKeys() });

/** `security.allow_private_targets` -> `KEEPWATCH_SECURITY__ALLOW_PRIVATE_TARGETS` (CONTRACT.md). */
export function envNameOf(key: string): string {
  return 'KEEPWATCH_' + key.toUpperCase().replaceAll('.', '__');
}

/** Environment variables that steer the loader itself and are not keys. */
export const LOADER_ENV = ['KEEPWATCH_CONFIG'] as const;
