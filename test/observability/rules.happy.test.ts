import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { ROOT } from '../helpers/platform.ts';

// The alert rules of deploy/observability as Prometheus's own checker sees them: `promtool check rules` (syntax,
// PromQL, templates) and `promtool test rules` (each alert fires on the series it watches, and not before).
// promtool is Debian's `prometheus` package; .ci/run installs it when missing.
t.setTimeout(60_000);

const run = promisify(execFile);
const KIT = join(ROOT, 'deploy/observability');
const RULES = join(KIT, 'alerts.rules.yml');

async function promtool(args: string[], cwd = KIT): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string; message: string };
    if (e.code === 'ENOENT')
      throw new Error('promtool is not installed: apt-get install -y prometheus (.ci/run does)', { cause: err });
    return { code: typeof e.code === 'number' ? e.code : 1, output: `${e.stdout ?? ''}${e.stderr ?? e.message}` };
  }
}

interface Rule {
  alert: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rules = (parseYaml(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (g) => g.rules,
);

t.test('promtool check rules accepts the rules file', async (t) => {
  const result = await promtool(['check', 'rules', RULES]);
  t.equal(result.code, 0, result.output);
  t.match(result.output, `SUCCESS: ${rules.length} rules found`);
});

t.test(
  'promtool test rules: every alert fires in the unit tests, and stays quiet while the platform is healthy',
  async (t) => {
    const result = await promtool(['test', 'rules', 'alerts.test.yml']);
    t.equal(result.code, 0, result.output);
    const tests = parseYaml(readFileSync(join(KIT, 'alerts.test.yml'), 'utf8')) as {
      tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const fired = new Set(
      tests.tests.flatMap((c) => c.alert_rule_test.filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)),
    );
    t.same([...fired].sort(), rules.map((r) => r.alert).sort(), 'a test in which each alert fires');
  },
);

t.test('a broken rule is refused: the check can fail', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rules-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const broken = readFileSync(RULES, 'utf8').replace('> 0.05', '> > 0.05');
  writeFileSync(join(dir, 'alerts.rules.yml'), broken);
  const result = await promtool(['check', 'rules', join(dir, 'alerts.rules.yml')]);
  t.not(result.code, 0, 'promtool refuses a PromQL syntax error');
  copyFileSync(join(KIT, 'alerts.test.yml'), join(dir, 'alerts.test.yml'));
  writeFileSync(join(dir, 'alerts.rules.yml'), readFileSync(RULES, 'utf8').replace('> 60', '> 600'));
  const tested = await promtool(['test', 'rules', 'alerts.test.yml'], dir);
  t.not(tested.code, 0, 'and the unit tests notice a threshold moved');
  t.match(tested.output, 'AffiliateOutboxLag');
});

t.test('every alert says how bad it is and what it means', async (t) => {
  for (const rule of rules) {
    t.match(rule.labels?.['severity'], /^(critical|warning|info)$/, `${rule.alert}: severity`);
    t.ok(rule.annotations?.['summary'], `${rule.alert}: summary`);
    t.ok(rule.annotations?.['description'], `${rule.alert}: description`);
  }
});
