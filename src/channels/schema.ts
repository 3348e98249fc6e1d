// Notification channels (monitoring-api.md, "Notification channel"; CONTRACT.md, channel config
// kinds) as TypeBox schemas. Which config fields are secrets lives in ./configs.ts.
import { Type, type Static } from '@sinclair/typebox';
import { listOf, Pagination } from '../http/route.js';
import { discriminated, nullable } from '../http/schema-helpers.js';
import { WriteSourceSchema } from '../http/write-source.js';
import { TAG_MAX_LENGTH, TAGS_MAX } from '../shared/tags.js';

const strict = { additionalProperties: false } as const;

/**
 * A secret field. `form` (an unanchored pattern) binds what a body sends; a value holding `***` also
 * passes the schema so that the sentinel rule (configs.ts) answers it 400 `REDACTION_SENTINEL`,
 * as a config read back and sent unchanged must be answered, not with a generic VALIDATION_FAILED.
 */
type SecretField = (description: string, form?: string, maxLength?: number) => ReturnType<typeof Type.String>;
const secretIn: SecretField = (description, form, maxLength = 512) => Type.String({
  minLength: 1, maxLength, ...(form && { pattern: `^(?:${form}|[\\s\\S]*\\*\\*\\*[\\s\\S]*)$` }),
  description: `${description} Secret: sealed at rest, read back as \`***\`; a value containing \`***\` is 400 \`REDACTION_SENTINEL\`.`,
});
const secretOut: SecretField = (description) => Type.String({ description: `${description} Secret: shows as \`***\`.` });

export const CHANNEL_KINDS = ['webhook', 'slack', 'discord', 'teams', 'email', 'ntfy', 'telegram', 'pagerduty', 'sms'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

const URL_MAX_LENGTH = 2048;
const URL_RULE = 'http or https; refused in a blocked address range like a monitor\'s host.';
const url = (description: string) => Type.String({ minLength: 1, maxLength: URL_MAX_LENGTH, description: `${description} ${URL_RULE}` });

const chatWebhook = (type: 'slack' | 'discord' | 'teams', title: string, secret: SecretField) => Type.Object({
  type: Type.Literal(type),
  webhook_url: secret(`The ${title} incoming-webhook URL (whoever holds it can post to the channel). ${URL_RULE}`, undefined, URL_MAX_LENGTH),
}, { ...strict, title: `${title.replace(/ /g, '')}ChannelConfig` });

const channelConfig = (secret: SecretField) => discriminated('type', [
  Type.Object({
    type: Type.Literal('webhook'),
    url: url('Receives a JSON POST per notification: `{id, event, test, incident: {id, title, status, impact, cause, started_at, ended_at, reminders_sent}, monitor: {id, name} | null}`, `event` one of `opened`, `reminder`, `recovered`; `id` is the notification\'s, the same on every retry (drop a repeat by it). Headers: `X-Keepwatch-Event` (the event), `X-Keepwatch-Delivery` (the id), and `X-Keepwatch-Signature` when a secret is set. A 2xx answer is delivered; any other is retried (a `Retry-After` in seconds lengthens the wait, up to an hour).'),
    secret: Type.Optional(nullable(secret('Signs the body: `X-Keepwatch-Signature: sha256=<hex>` carries the HMAC-SHA256 of the raw body under this secret, as lower-case hex after `sha256=`.'))),
  }, { ...strict, title: 'WebhookChannelConfig' }),
  chatWebhook('slack', 'Slack', secret),
  chatWebhook('discord', 'Discord', secret),
  chatWebhook('teams', 'Microsoft Teams', secret),
  Type.Object({
    type: Type.Literal('email'),
    to: Type.String({ format: 'email', maxLength: 254, description: 'One address.' }),
  }, { ...strict, title: 'EmailChannelConfig' }),
  Type.Object({
    type: Type.Literal('ntfy'),
    server_url: url('The ntfy server, e.g. `https://ntfy.sh`.'),
    topic: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: '1-64 letters, digits, `_` or `-`.' }),
    token: Type.Optional(nullable(secret('Access token for a protected topic.'))),
  }, { ...strict, title: 'NtfyChannelConfig' }),
  Type.Object({
    type: Type.Literal('telegram'),
    bot_token: secret('The bot token from @BotFather (`<digits>:<key>`).', '[0-9]{1,20}:[A-Za-z0-9_-]{20,100}'),
    chat_id: Type.Union([
      Type.String({ pattern: '^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$' }),
      // Bounded so the id survives JSON and JavaScript exactly (Telegram's ids fit in 52 bits).
      Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
    ], { description: 'A numeric chat id (string or integer) or an `@channelname`.' }),
    api_base_url: Type.Optional(nullable(url('Bot API base; default `https://api.telegram.org`.'))),
  }, { ...strict, title: 'TelegramChannelConfig' }),
  Type.Object({
    type: Type.Literal('pagerduty'),
    routing_key: secret('The Events API v2 integration (routing) key: 32 letters or digits.', '[A-Za-z0-9]{32}'),
    events_url: Type.Optional(nullable(url('Events API v2 endpoint; default `https://events.pagerduty.com/v2/enqueue`.'))),
  }, { ...strict, title: 'PagerDutyChannelConfig' }),
  Type.Object({
    type: Type.Literal('sms'),
    to: Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164 number, e.g. `+447700900123`. Sent through the provider the deployment configures. Needs a plan with SMS alerts (403 `SMS_ALERTS_DISABLED`).' }),
  }, { ...strict, title: 'SmsChannelConfig' }),
], { description: 'The transport, a tagged union on `type`. Secret fields (`secret`, `token`, `bot_token`, `routing_key` and a team chat\'s `webhook_url`) read back as `***`; other URLs are shown.' });

export const ChannelConfig = channelConfig(secretIn);
const ShownChannelConfig = channelConfig(secretOut);

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100, description: '1-100 characters, trimmed.' }),
  enabled: Type.Boolean({ description: 'Default true; a disabled channel is skipped when alerting.' }),
  config: ChannelConfig,
  auto_bind_tags: Type.Array(Type.String({ maxLength: 1024 }), {
    maxItems: 1000,
    description: `The channel also pages every monitor carrying one of these tags, ignoring case. Tag rules as on monitors (trimmed, no blank, control or invisible characters, at most ${TAGS_MAX}, each at most ${TAG_MAX_LENGTH} characters); two spellings of one tag are stored once (the first). Replaced whole on PATCH; \`[]\` clears.`,
  }),
  acknowledge_button: Type.Boolean({ description: 'Default true. Read by the chat, email and push-topic kinds (slack, discord, teams, email, ntfy, telegram).' }),
  resolve_button: Type.Boolean({ description: 'Default false. Read by the same kinds except ntfy: closes the incident from the alert for a signed-in member or a linked chat account.' }),
};

export const Channel = Type.Object({
  id: Type.String({ format: 'uuid' }),
  ...fields,
  config: ShownChannelConfig,
  write_source: WriteSourceSchema,
  verified: Type.Boolean({ description: 'An email channel pages only once its address is confirmed through the link mailed to it (on create, when `to` changes, and on `resend-verification`); other kinds are always verified.' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, { $id: 'NotificationChannel', additionalProperties: false, description: 'A notification channel of the org.' });

export const CreateChannelBody = Type.Object({
  ...Type.Partial(Type.Object(fields)).properties,
  name: fields.name,
  config: fields.config,
}, { additionalProperties: false });

export const PatchChannelBody = Type.Partial(Type.Object(fields), {
  additionalProperties: false,
  description: 'Only the fields sent change. A `config` replaces the stored one whole; leave `config` out to keep stored secrets.',
});

export const ListChannelsQuery = Type.Object(Pagination);

export const ChannelList = listOf('notification_channels', Channel, { order: 'Oldest first.' });

export type ChannelT = Static<typeof Channel>;
export type ChannelConfigT = Static<typeof ChannelConfig>;
export type CreateChannel = Static<typeof CreateChannelBody>;
export type PatchChannel = Static<typeof PatchChannelBody>;

export const TestChannelBody = Type.Object({ config: ChannelConfig }, { additionalProperties: false });

export const TestSendResult = Type.Object({
  delivered: Type.Boolean({ description: 'The receiver answered 2xx.' }),
  error: nullable(Type.String({ description: 'Why it was not delivered: the HTTP status, a connection error, a kind not delivered yet.' })),
}, { additionalProperties: false });
