import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ROOT } from './platform.ts';

/** Words of PromQL that are not metric names where they stand outside a call's parentheses. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'inf', 'nan']);

/**
 * The metric names a PromQL expression reads. PromQL has no parser in this project's packages, and these
 * expressions need only a lexer: what stands in quotes, braces (label matchers) and brackets (ranges) is dropped,
 * and so are the label lists of by/without/on/ignoring/group_left/group_right, numbers and durations, and Grafana's
 * $variables; every identifier left that is not a keyword or followed by "(" (a function or an aggregation) is a
 * metric name.
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ')
    .replace(/(?<![\w:])\d[\w.]*/g, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/[A-Za-z_:][\w:]*/g)) {
    const after = bare.slice(match.index + match[0].length);
    if (KEYWORDS.has(match[0].toLowerCase()) || /^\s*\(/.test(after)) continue;
    names.add(match[0]);
  }
  return [...names];
}

const KIT = join(ROOT, 'deploy/observability');

/** Every expression of the alert rules (deploy/observability/alerts.rules.yml), by alert. */
export function ruleExpressions(): { where: string; expr: string }[] {
  const file = parseYaml(readFileSync(join(KIT, 'alerts.rules.yml'), 'utf8')) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  };
  return file.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })));
}

interface Panel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

/** Every query of the Grafana dashboard (deploy/observability/dashboard.json), by panel. */
export function dashboardExpressions(): { where: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(join(KIT, 'dashboard.json'), 'utf8')) as { panels: Panel[] };
  const walk = (panels: Panel[]): { where: string; expr: string }[] =>
    panels.flatMap((p) => [
      ...(p.targets ?? []).flatMap((q) => (q.expr ? [{ where: `panel "${p.title ?? ''}"`, expr: q.expr }] : [])),
      ...walk(p.panels ?? []),
    ]);
  return walk(dashboard.panels);
}

/** The metric names of a Prometheus text exposition that have at least one sample (not only HELP and TYPE). */
export function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const name = /^([A-Za-z_:][\w:]*)[{ ]/.exec(line)?.[1];
    if (name) names.add(name);
  }
  return names;
}
