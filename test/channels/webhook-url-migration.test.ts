// Migration 0033: team-chat webhook URLs stored in clear before they became secrets take the
// sealer's unsealed form, which delivery opens to the same URL; sealed values and other kinds stay.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openPglite } from '../../src/db/db.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { newId } from '../../src/shared/ids.js';
import { sealerFor } from '../../src/shared/seal.js';
import { openConfig, type StoredChannelConfig } from '../../src/channels/configs.js';

describe('migration 0033: chat webhook URLs as secrets', () => {
  it('wraps clear URLs of slack, discord and teams channels so they open to the same URL; leaves the rest', async () => {
    const db = await openPglite();
    try {
      const all = listMigrations();
      await migrate(db, all.filter((m) => m.version < 33));
      const sealer = sealerFor(Buffer.alloc(32, 7));
      const sealed = sealer.seal('https://hooks.slack.com/services/T/B/sealed');
      const configs: Record<string, object> = {
        slack: { type: 'slack', webhook_url: 'https://hooks.slack.com/services/T/B/x' },
        discord: { type: 'discord', webhook_url: 'https://discord.com/api/webhooks/1/y' },
        teams: { type: 'teams', webhook_url: 'plain:https://example.com/teams' },
        sealedSlack: { type: 'slack', webhook_url: sealed },
        webhook: { type: 'webhook', url: 'https://example.com/hook' },
      };
      // The rows name no org: foreign keys are not what this migration is about.
      await db.query('SET session_replication_role = replica');
      for (const [name, config] of Object.entries(configs)) {
        await db.query(
          `INSERT INTO notification_channels (id, org_id, account_id, name, kind, config, write_source) VALUES ($1, $2, $2, $3, $4, $5, 'api')`,
          [newId(), newId(), name, (config as { type: string }).type, JSON.stringify(config)]);
      }
      await db.query('SET session_replication_role = DEFAULT');
      await migrate(db, all);
      const rows = await db.query<{ name: string; config: StoredChannelConfig }>('SELECT name, config FROM notification_channels');
      const byName = Object.fromEntries(rows.map((r) => [r.name, r.config]));
      assert.equal(byName.slack!.webhook_url, 'plain:https://hooks.slack.com/services/T/B/x');
      assert.equal(byName.teams!.webhook_url, 'plain:https://example.com/teams', 'a value already in the unsealed form is not wrapped twice');
      assert.equal(byName.sealedSlack!.webhook_url, sealed);
      assert.deepEqual(byName.webhook, configs.webhook);
      assert.equal((openConfig(byName.discord!, sealer) as { webhook_url: string }).webhook_url, 'https://discord.com/api/webhooks/1/y');
      assert.equal((openConfig(byName.sealedSlack!, sealer) as { webhook_url: string }).webhook_url, 'https://hooks.slack.com/services/T/B/sealed');
    } finally {
      await db.close();
    }
  });
});
