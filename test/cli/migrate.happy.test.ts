import { readdirSync } from 'node:fs';
import t from 'tap';
import { runScript } from '../helpers/cli.ts';
import { createTestDatabase, ROOT } from '../helpers/platform.ts';

/** `npm run migrate`: the schema step a deployment can run on its own before the services start. */
t.setTimeout(120_000);
const migrations = readdirSync(`${ROOT}shared/migrations`)
  .filter((f) => f.endsWith('.sql'))
  .sort();

t.test('an empty database gets every migration, in order, and a second run applies none', async (t) => {
  const db = await createTestDatabase(t, { migrated: false });
  const first = await runScript('scripts/migrate.ts', [], { DATABASE_URL: db.url });
  t.equal(first.code, 0, `exit 0 (stderr: ${first.stderr.trim()})`);
  t.equal(first.stderr, '');
  t.same(first.json, { applied: migrations });
  const versions = await db.sql<{ version: string }[]>`select version from schema_migrations order by version`;
  t.same(
    versions.map((r) => r.version),
    migrations.map((f) => f.slice(0, 3)),
  );
  const [tables] = await db.sql<{ n: number }[]>`
    select count(*)::int as n from information_schema.tables
    where table_schema = 'public' and table_name in ('merchants', 'api_keys', 'affiliates', 'outbox', 'commissions', 'webhook_deliveries')`;
  t.equal(tables!.n, 6, 'the tables exist');

  const second = await runScript('scripts/migrate.ts', [], { DATABASE_URL: db.url });
  t.equal(second.code, 0);
  t.same(second.json, { applied: [] });
});

t.test('errors: a bad DATABASE_URL is named; an unreachable server fails with exit 1', async (t) => {
  const bad = await runScript('scripts/migrate.ts', [], { DATABASE_URL: 'not a url' });
  t.equal(bad.code, 2);
  t.equal(bad.stdout, '');
  t.match(bad.stderr, /^migrate: .*DATABASE_URL/);

  const unreachable = await runScript('scripts/migrate.ts', [], {
    DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere',
  });
  t.equal(unreachable.code, 1);
  t.equal(unreachable.stdout, '');
  t.match(unreachable.stderr, /^migrate: failed: /);
});
