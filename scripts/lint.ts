import { spawnSync } from 'node:child_process';

/**
 * `npm run lint`: the hygiene gate, three tools in turn - typescript-eslint (type-aware rules, eslint.config.js),
 * Prettier (formatting, .prettierrc.json) and knip (unused files, exports and dependencies, knip.json).
 * `npm run lint -- --fix` lets each fix what it can: eslint's fixes, Prettier's formatting, and knip removing
 * `export` from what nothing imports. Every tool runs even after one fails, so one run lists everything.
 */
const fix = process.argv.includes('--fix');
const steps: { name: string; args: string[] }[] = [
  { name: 'eslint', args: ['eslint', ...(fix ? ['--fix'] : []), '.'] },
  { name: 'prettier', args: ['prettier', fix ? '--write' : '--check', '--log-level', 'warn', '.'] },
  { name: 'knip', args: ['knip', ...(fix ? ['--fix', '--fix-type', 'exports,types'] : [])] },
];

const failed: string[] = [];
for (const step of steps) {
  const run = spawnSync('npx', ['--no-install', ...step.args], { stdio: 'inherit' });
  if (run.status !== 0) failed.push(step.name);
}
if (failed.length > 0) {
  process.stderr.write(
    `lint: ${failed.join(', ')} failed${fix ? '' : ' (`npm run lint -- --fix` fixes what it can)'}\n`,
  );
  process.exit(1);
}
process.stderr.write('lint: eslint, prettier and knip passed\n');
