// CI database chores through `pg` (no psql needed): `create NAME`, `drop NAME`.
// `drop` also removes what the PostgreSQL test runs leave on the server: `kw_t_*` test databases
// and `kw_tpl_*` templates (under the test helper's advisory locks, so a concurrent run's
// template is not pulled away while it clones). Databases still in use are left alone.
import pg from 'pg';

const [command, name] = process.argv.slice(2);
const adminUrl = process.env.CI_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

if (!['create', 'drop'].includes(command ?? '') || !/^[a-z_][a-z0-9_]*$/.test(name ?? '')) {
  process.stderr.write('usage: node scripts/ci-db.mjs create|drop <database name: [a-z0-9_]>\n');
  process.exit(2);
}

const client = new pg.Client({ connectionString: adminUrl });
await client.connect();
try {
  if (command === 'create') {
    await client.query(`CREATE DATABASE ${name}`);
  } else {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    const dropAll = async (pattern) => {
      const { rows } = await client.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [pattern]);
      for (const { datname } of rows) {
        await client.query(`DROP DATABASE IF EXISTS "${datname}"`).catch((err) => {
          process.stderr.write(`left ${datname}: ${err.message}\n`);
        });
      }
    };
    await dropAll('kw\\_t\\_%');
    await client.query('SELECT pg_advisory_lock(7771)');
    await client.query('SELECT pg_advisory_lock(7772)');
    await dropAll('kw\\_tpl\\_%');
  }
} finally {
  await client.end();
}
