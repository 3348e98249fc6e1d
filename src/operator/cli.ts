// `keepwatch admin ...`: the operator surface over HTTP (an embedded store admits one process at a
// time, so the CLI talks to the running server). The secret comes from configuration or from the
// file a zero-config server generated into `data_dir`.
import { isIPv6 } from 'node:net';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cfg, ConfigError, sourceOf, type Config } from '../config/load.js';
import { OPERATOR_SECRET_FILE, readSecretFile, secretPath } from '../config/secrets.js';

interface Command {
  usage: string;
  options: Record<string, { type: 'string' | 'boolean' }>;
  required: string[];
  request: (o: Record<string, string | boolean | undefined>) => { method: string; path: string; body?: unknown };
}

const list = (s: unknown): string[] => String(s ?? '').split(',').map((x) => x.trim()).filter(Boolean);
// Anything but digits goes to the server as sent, to be refused there (Number('abc') would be null: no expiry).
const int = (s: unknown): number | string | undefined => (s === undefined ? undefined : /^\d+$/.test(String(s)) ? Number(s) : String(s));

const COMMANDS: Record<string, Command> = {
  'create-user': {
    usage: '--email EMAIL [--plan PLAN] [--org-name NAME]',
    options: { email: { type: 'string' }, plan: { type: 'string' }, 'org-name': { type: 'string' } },
    required: ['email'],
    request: (o) => ({ method: 'POST', path: '/operator/users', body: { email: o.email, plan_id: o.plan, org_name: o['org-name'] } }),
  },
  'create-token': {
    usage: '--user-id ID --name NAME --scopes a:read,b:write|full_access [--org-id ID] [--expires-in-days N]',
    options: { 'user-id': { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, 'org-id': { type: 'string' }, 'expires-in-days': { type: 'string' } },
    required: ['user-id', 'name', 'scopes'],
    request: (o) => ({ method: 'POST', path: `/operator/users/${o['user-id']}/api-tokens`, body: { name: o.name, scopes: list(o.scopes), org_id: o['org-id'], expires_in_days: int(o['expires-in-days']) } }),
  },
  'set-plan': {
    usage: '--account-id ID --plan PLAN --reason TEXT [--fallback PLAN]',
    options: { 'account-id': { type: 'string' }, plan: { type: 'string' }, reason: { type: 'string' }, fallback: { type: 'string' } },
    required: ['account-id', 'plan', 'reason'],
    request: (o) => ({ method: 'PUT', path: `/operator/accounts/${o['account-id']}/plan`, body: { plan_id: o.plan, reason: o.reason, fallback_plan_id: o.fallback } }),
  },
  'set-overrides': {
    usage: '--account-id ID --caps \'{"max_targets":500}\' --reason TEXT [--expires-at RFC3339]',
    options: { 'account-id': { type: 'string' }, caps: { type: 'string' }, reason: { type: 'string' }, 'expires-at': { type: 'string' } },
    required: ['account-id', 'caps', 'reason'],
    request: (o) => ({ method: 'PUT', path: `/operator/accounts/${o['account-id']}/overrides`, body: { caps: jsonOption(o.caps, 'caps', '{"max_targets":500}'), reason: o.reason, expires_at: o['expires-at'] } }),
  },
  'clear-overrides': {
    usage: '--account-id ID [--reason TEXT]',
    options: { 'account-id': { type: 'string' }, reason: { type: 'string' } },
    required: ['account-id'],
    request: (o) => ({ method: 'DELETE', path: `/operator/accounts/${o['account-id']}/overrides${o.reason ? `?reason=${encodeURIComponent(String(o.reason))}` : ''}` }),
  },
  'list-regions': { usage: '', options: {}, required: [], request: () => ({ method: 'GET', path: '/operator/regions' }) },
  'create-region': {
    usage: '--id ID --name NAME [--city C] [--country-code CC] [--continent C] [--default-selected] [--flow-capable]',
    options: { id: { type: 'string' }, name: { type: 'string' }, city: { type: 'string' }, 'country-code': { type: 'string' }, continent: { type: 'string' }, 'default-selected': { type: 'boolean' }, 'flow-capable': { type: 'boolean' } },
    required: ['id', 'name'],
    request: (o) => ({ method: 'POST', path: '/operator/regions', body: { id: o.id, name: o.name, city: o.city, country_code: o['country-code'], continent: o.continent, default_selected: o['default-selected'], flow_capable: o['flow-capable'] } }),
  },
  'enable-region': { usage: '--id ID', options: { id: { type: 'string' } }, required: ['id'], request: (o) => ({ method: 'PATCH', path: `/operator/regions/${o.id}`, body: { enabled: true } }) },
  'disable-region': { usage: '--id ID', options: { id: { type: 'string' } }, required: ['id'], request: (o) => ({ method: 'PATCH', path: `/operator/regions/${o.id}`, body: { enabled: false } }) },
  'list-agents': { usage: '', options: {}, required: [], request: () => ({ method: 'GET', path: '/operator/agents' }) },
  'create-agent': {
    usage: '--region-id ID --name NAME',
    options: { 'region-id': { type: 'string' }, name: { type: 'string' } },
    required: ['region-id', 'name'],
    request: (o) => ({ method: 'POST', path: '/operator/agents', body: { region_id: o['region-id'], name: o.name } }),
  },
  'delete-agent': { usage: '--id ID', options: { id: { type: 'string' } }, required: ['id'], request: (o) => ({ method: 'DELETE', path: `/operator/agents/${o.id}` }) },
};

export function adminUsage(): string {
  return [
    'keepwatch admin <command> [--config PATH] [--url http://host:port] [options]', '',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name} ${c.usage}`.trimEnd()), '',
    'Prints the server\'s JSON answer (delete-agent: nothing). Exits 0 done, 1 refused by the server, 2 bad usage or a refused configuration, 3 no server.',
  ].join('\n');
}

/** Bad usage: the message and the command's usage are printed, and the exit code is 2. */
class UsageError extends Error {}

type Print = (s: string) => void;

/**
 * Returns the process exit code: 0 done, 1 refused or not understood by the server, 2 bad usage or a
 * refused configuration, 3 no server. `readConfig` is called only for a call to the server: usage and help need no working setup.
 * The server's JSON answer goes to `out`; an unknown command and the NOT_FOUND hint go to `errOut`.
 */
export async function runAdmin(
  args: string[], readConfig: () => Config,
  out: Print = (s) => process.stdout.write(s + '\n'), errOut: Print = (s) => process.stderr.write(s + '\n'),
): Promise<number> {
  const { name, rest } = splitCommand(args);
  const command = name ? COMMANDS[name] : undefined;
  const wantsHelp = rest.includes('--help') || rest.includes('-h');
  // As `keepwatch` itself: no command is the usage and 2, an unknown one says so on stderr.
  if (!name) {
    out(adminUsage());
    return wantsHelp ? 0 : 2;
  }
  if (!command) {
    errOut(`unknown command: ${name}\n${adminUsage()}`);
    return 2;
  }
  const usage = `usage: keepwatch admin ${name} ${command.usage}`.trimEnd();
  if (wantsHelp) {
    out(usage);
    return 0;
  }
  let call: AdminCall;
  try {
    call = prepareCall(command, rest, readConfig);
  } catch (err) {
    // A configuration it refuses is bad usage too: no server was asked, so never the server's 1.
    if (err instanceof ConfigError) {
      errOut(err.message);
      return 2;
    }
    if (!(err instanceof UsageError)) throw err;
    out(`${err.message}\n${usage}`);
    return 2;
  }
  return send(call, out, errOut);
}

/**
 * The command and its options. Options may stand before the command too (`admin --url URL
 * list-regions`), as `--config` may anywhere: they are read as the command's own.
 */
function splitCommand(args: readonly string[]): { name: string | undefined; rest: string[] } {
  const leading: string[] = [];
  let i = 0;
  for (; i < args.length && args[i]!.startsWith('-'); i++) {
    leading.push(args[i]!);
    if (args[i] === '--url' && i + 1 < args.length) leading.push(args[++i]!);
  }
  return { name: args[i], rest: [...args.slice(i + 1), ...leading] };
}

type AdminRequest = ReturnType<Command['request']>;

/** One call to the server; `secretFrom` says where the secret was read, for the NOT_FOUND hint. */
interface AdminCall { base: string; secret: string; secretFrom: string; request: AdminRequest }

/** Options, secret and server address of one call; a UsageError names what is wrong with them. */
function prepareCall(command: Command, args: string[], readConfig: () => Config): AdminCall {
  const values = parseOptions(command, args);
  const missing = command.required.filter((k) => values[k] === undefined);
  if (missing.length) throw new UsageError(`missing --${missing.join(', --')}`);
  const config = readConfig();
  const configured = cfg.optStr(config, 'operator.secret');
  if (!configured && !cfg.bool(config, 'operator.auto_secret')) {
    // As the server reads it: no secret and none generated, so its operator surface is off.
    throw new UsageError('no operator secret: operator.secret is unset and operator.auto_secret is false, so the server\'s operator surface is off');
  }
  const dataDir = resolve(cfg.str(config, 'data_dir'));
  const secret = configured ?? readSecretFile(dataDir, OPERATOR_SECRET_FILE);
  if (!secret) throw new UsageError(`no operator secret: set operator.secret, or run this where the server's data_dir (${cfg.str(config, 'data_dir')}) is`);
  const secretFrom = configured ? sourceOf(config, 'operator.secret') : secretPath(dataDir, OPERATOR_SECRET_FILE);
  return { base: serverBase(values.url as string | undefined, config), secret, secretFrom, request: command.request(values) };
}

function parseOptions(command: Command, args: string[]): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({ args, options: { ...command.options, url: { type: 'string' } }, strict: true }).values as Record<string, string | boolean | undefined>;
  } catch (err) {
    // parseArgs explains unknown options, missing values and stray arguments in one sentence.
    if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS_')) throw new UsageError((err as Error).message);
    throw err;
  }
}

/** A JSON option (`--caps`), parsed here so a typo is a usage error rather than a stack trace. */
function jsonOption(value: unknown, option: string, example: string): unknown {
  try {
    return JSON.parse(String(value));
  } catch {
    throw new UsageError(`--${option} must be JSON, e.g. '${example}'`);
  }
}

// A wildcard listen address is not one a client can dial: it means this machine's loopback of the
// same family. Not `localhost`, which may name 127.0.0.1 alone while the server listens on ::1.
const WILDCARD_LOOPBACK: Record<string, string> = { '0.0.0.0': '127.0.0.1', '[::]': '[::1]' };

/** `--url`, else where `http.host`:`http.port` is reached from this machine. */
function serverBase(url: string | undefined, config: Config): string {
  if (url !== undefined) {
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) throw new UsageError(`--url must be an http(s) URL such as http://127.0.0.1:8080, got ${JSON.stringify(url)}`);
    return parsed.origin;
  }
  const host = cfg.str(config, 'http.host');
  const listen = `http://${isIPv6(host) ? `[${host}]` : host}:${cfg.int(config, 'http.port')}`;
  if (!URL.canParse(listen)) throw new UsageError(`http.host ${JSON.stringify(host)} is not a host name or address; pass --url`);
  const origin = new URL(listen);
  origin.hostname = WILDCARD_LOOPBACK[origin.hostname] ?? origin.hostname;
  return origin.origin;
}

/**
 * Sends the request and prints the server's JSON answer; an empty success (the 204 of `delete-agent`)
 * prints nothing rather than a bare status code; anything else is one line.
 */
async function send({ base, secret, secretFrom, request: { method, path, body } }: AdminCall, out: Print, errOut: Print): Promise<number> {
  let response: Response;
  try {
    response = await fetch(new URL(path, base), {
      method,
      headers: { authorization: `Bearer ${secret}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    out(`cannot reach the server at ${base} (${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}); is \`keepwatch serve\` running? (--url to point elsewhere)`);
    return 3;
  }
  const text = await response.text();
  if (!text) {
    if (response.ok) return 0;
    out(`the server at ${base} answered ${response.status} with no body; is it keepwatch? (--url to point elsewhere)`);
    return 1;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    out(`the server at ${base} answered ${response.status} ${response.headers.get('content-type') ?? 'without a content type'}, not JSON; is it keepwatch? (--url to point elsewhere)`);
    return 1;
  }
  out(JSON.stringify(json, null, 2));
  if (response.status === 404 && (json as { error?: { code?: unknown } } | null)?.error?.code === 'NOT_FOUND') {
    // The surface answers a wrong secret exactly as an unknown route, so the answer alone cannot say which.
    errOut(`hint: NOT_FOUND is also the answer to a wrong operator secret: check that the secret (from ${secretFrom}) is the server's and that ${base} is the server (--url)`);
  }
  return response.ok ? 0 : 1;
}
