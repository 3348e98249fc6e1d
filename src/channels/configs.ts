// What each channel kind's config holds beyond its shape: which fields are secrets (sealed at rest,
// read back as `***`, refused when `***` is written back) and which are URLs the service will call
// (judged by the SSRF guard like a monitor's host).
import type { NetworkGuard } from '../net/guard.js';
import { AppError } from '../shared/errors.js';
import { REDACTED, type Sealer } from '../shared/seal.js';
import { hostOf, parseHttpUrl } from '../targets/kinds.js';
import { holdsSentinel } from '../targets/redaction.js';
import type { ChannelConfigT, ChannelKind } from './schema.js';

type Config = Record<string, unknown> & { type: ChannelKind };

// A team chat's incoming-webhook URL is itself the credential: whoever holds it can post into the
// channel (Slack: "keep it secret"), so it is sealed and redacted like a token.
const SECRET_FIELDS: Readonly<Record<ChannelKind, readonly string[]>> = {
  webhook: ['secret'], slack: ['webhook_url'], discord: ['webhook_url'], teams: ['webhook_url'], email: [], ntfy: ['token'],
  telegram: ['bot_token'], pagerduty: ['routing_key'], sms: [],
};

const URL_FIELDS: Readonly<Record<ChannelKind, readonly string[]>> = {
  webhook: ['url'], slack: ['webhook_url'], discord: ['webhook_url'], teams: ['webhook_url'], email: [],
  ntfy: ['server_url'], telegram: ['api_base_url'], pagerduty: ['events_url'], sms: [],
};

const populated = (config: Config, field: string): boolean => typeof config[field] === 'string';

/**
 * 400 `REDACTION_SENTINEL` when a secret in the body holds the placeholder a read shows, as for check
 * credentials: a config read back and sent unchanged is refused, never taken as "keep the secret".
 */
export function refuseSentinel(config: ChannelConfigT): void {
  for (const field of SECRET_FIELDS[config.type]) {
    if (holdsSentinel((config as Config)[field])) {
      throw new AppError(400, 'REDACTION_SENTINEL', `config.${field}: contains "${REDACTED}", the redaction placeholder; send the real value (on an update, leave config out to keep the stored one)`, { field: `config.${field}` });
    }
  }
}

/** Every URL the service would call must be http(s) and outside the blocked ranges. */
export async function checkConfigUrls(config: ChannelConfigT, guard: NetworkGuard): Promise<void> {
  for (const field of URL_FIELDS[config.type]) {
    const value = (config as Config)[field];
    if (typeof value !== 'string') continue;
    const at = `config.${field}`;
    await guard.checkHost(hostOf(parseHttpUrl(value, at, 'a channel URL carries no credential (an ntfy server takes `token`)')), at);
  }
}

export function sealConfig(config: ChannelConfigT, sealer: Sealer): Config {
  const stored: Config = { ...config };
  for (const field of SECRET_FIELDS[config.type]) if (populated(stored, field)) stored[field] = sealer.seal(stored[field] as string);
  return stored;
}

export function redactConfig(stored: Config): ChannelConfigT {
  const shown: Config = { ...stored };
  for (const field of SECRET_FIELDS[stored.type]) if (populated(shown, field)) shown[field] = REDACTED;
  return shown as unknown as ChannelConfigT;
}

/** The config as delivery needs it; null when a secret was sealed under a key no longer configured. */
export function openConfig(stored: Config, sealer: Sealer): ChannelConfigT | null {
  const open: Config = { ...stored };
  for (const field of SECRET_FIELDS[stored.type]) {
    if (!populated(open, field)) continue;
    const value = sealer.open(open[field] as string);
    if (value === null) return null;
    open[field] = value;
  }
  return open as unknown as ChannelConfigT;
}

export type StoredChannelConfig = Config;
