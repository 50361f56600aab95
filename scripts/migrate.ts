import { Type } from '@sinclair/typebox';
import { loadConfig, CommonEnv } from '@platform/shared/config';
import { connectDatabase } from '@platform/shared/db';
import { migrate } from '@platform/shared/migrate';

/**
 * `npm run migrate`: applies the migrations this database has not seen, then exits. Every service also migrates
 * when it starts (safe with several replicas at once); this is for a deployment that runs the schema change as a
 * step of its own before the new version's processes start. Prints `{ "applied": [...] }` (empty when up to date).
 */
async function main(): Promise<string[]> {
  const config = loadConfig(Type.Object({ DATABASE_URL: CommonEnv.DATABASE_URL }));
  const sql = connectDatabase(config.DATABASE_URL, { max: 1, applicationName: 'migrate' });
  try {
    return await migrate(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

main().then(
  (applied) => process.stdout.write(JSON.stringify({ applied }) + '\n'),
  (err: Error) => {
    process.stderr.write(`migrate: ${err.name === 'ConfigError' ? err.message : `failed: ${err.message}`}\n`);
    process.exitCode = err.name === 'ConfigError' ? 2 : 1;
  },
);
