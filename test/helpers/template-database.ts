import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { connectDatabase } from '@platform/shared/db';
import { migrate } from '@platform/shared/migrate';

/**
 * The migrated database that every test database is copied from (`create database … template …`): the migrations
 * run once per schema, not once per test file. Its name carries a hash of shared/migrations, so a changed or added
 * migration gives a new template and the old ones are dropped, once a day old, by whoever builds a new one. It is built under a
 * temporary name and renamed when complete (a builder that dies leaves no half-migrated template), and it refuses
 * connections: a copy fails while anyone is connected to its template.
 */
const MIGRATIONS_DIR = fileURLToPath(new URL('../../shared/migrations/', import.meta.url));
// Any constant works: every builder takes the same session lock on the server's admin database.
const TEMPLATE_LOCK = 7_241_020;
const PREFIX = 'tpl_';
const BUILDING = 'tplbuild_';
const STALE_TEMPLATE_MS = 24 * 3_600_000;
const STALE_BUILD_MS = 3_600_000;

/** The template's name for the migrations now in the tree. */
export function templateName(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(MIGRATIONS_DIR).sort()) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(MIGRATIONS_DIR + file));
  }
  return `${PREFIX}${hash.digest('hex').slice(0, 20)}`;
}

const withDatabase = (adminUrl: string, name: string) => {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
};

/** Builds the template for the current migrations unless it exists, and drops every other one; answers its name. */
export async function ensureTemplateDatabase(adminUrl: string): Promise<string> {
  const name = templateName();
  const admin = postgres(adminUrl, { max: 2, onnotice: () => {} });
  try {
    const exists = async (sql: postgres.Sql) =>
      (await sql`select 1 from pg_database where datname = ${name}`).length > 0;
    if (await exists(admin)) return name;
    // A session lock: `reserve` keeps the lock and its unlock on one connection (the pool's second).
    const session = await admin.reserve();
    try {
      await session`select pg_advisory_lock(${TEMPLATE_LOCK})`;
      if (await exists(session)) return name;
      // Under the lock, another template is stale once it is a day old, a half-built one after an hour: two runs of
      // different migrations at once (two checkouts on one server) each keep theirs meanwhile, instead of dropping
      // each other's in turn. A template's comment is when it was built (epoch ms); one without is from before.
      const candidates = await session<{ datname: string; built: string | null }[]>`
        select datname, shobj_description(oid, 'pg_database') as built from pg_database
        where left(datname, ${PREFIX.length}) = ${PREFIX} or left(datname, ${BUILDING.length}) = ${BUILDING}`;
      const stale = candidates.filter(
        ({ datname, built }) =>
          Number(/^\d+$/.test(built ?? '') ? built : 0) <
          Date.now() - (datname.startsWith(BUILDING) ? STALE_BUILD_MS : STALE_TEMPLATE_MS),
      );
      for (const { datname } of stale) {
        await session.unsafe(`alter database "${datname}" is_template false`);
        await session.unsafe(`drop database if exists "${datname}" with (force)`);
      }
      const building = `${BUILDING}${randomBytes(4).toString('hex')}`;
      await session.unsafe(`create database "${building}"`);
      await session.unsafe(`comment on database "${building}" is '${Date.now()}'`);
      const sql = connectDatabase(withDatabase(adminUrl, building), {
        max: 1,
        applicationName: 'test-template',
        statementTimeoutMs: 0,
        lockTimeoutMs: 0,
      });
      try {
        await migrate(sql);
      } finally {
        await sql.end({ timeout: 5 });
      }
      await session.unsafe(`alter database "${building}" rename to "${name}"`);
      await session.unsafe(`alter database "${name}" with is_template true allow_connections false`);
      return name;
    } finally {
      await session`select pg_advisory_unlock(${TEMPLATE_LOCK})`.catch(() => {});
      session.release();
    }
  } finally {
    await admin.end({ timeout: 5 });
  }
}
