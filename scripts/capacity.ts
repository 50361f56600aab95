import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ASSUMPTIONS, BYTES_PER_ROW, OPERATIONS, type FigureRef } from './capacity/inputs.ts';

/**
 * `npm run capacity`: the capacity projection of docs/SCALING.md, made from the CPU per operation that the last
 * `npm run bench` wrote into docs/PERFORMANCE.md and the assumptions of scripts/capacity/inputs.ts. Prints it as
 * Markdown; `--write` also puts it into docs/SCALING.md between its capacity markers (a test checks the two agree).
 */
const PERFORMANCE = fileURLToPath(new URL('../docs/PERFORMANCE.md', import.meta.url));
const SCALING = fileURLToPath(new URL('../docs/SCALING.md', import.meta.url));
const BEGIN = '<!-- capacity:begin (written by npm run capacity -- --write; edits inside are overwritten) -->';
const END = '<!-- capacity:end -->';

type Operation = keyof typeof OPERATIONS;

/** The Markdown tables of a document, each as its rows of trimmed cells (the header first, the rule dropped). */
function tables(doc: string): string[][][] {
  const found: string[][][] = [];
  let current: string[][] | undefined;
  for (const line of doc.split('\n')) {
    if (!line.startsWith('|')) {
      current = undefined;
      continue;
    }
    if (/^\|[\s:|-]+\|$/.test(line)) continue;
    const cells = line
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim());
    if (!current) found.push((current = []));
    current.push(cells);
  }
  return found;
}

/** A figure of docs/PERFORMANCE.md; a table, row or column it no longer has stops the script, naming it. */
function figure(all: string[][][], ref: FigureRef): number {
  for (const table of all) {
    const header = table[0]!;
    if (!header[0]!.startsWith(ref.table)) continue;
    const row = table.find((cells) => cells[0] === ref.row);
    if (!row) continue;
    const column = header.indexOf(ref.column);
    const value = Number(row[column]?.replace(/,/g, ''));
    if (column < 0 || !Number.isFinite(value)) break;
    return value;
  }
  throw new Error(`docs/PERFORMANCE.md has no figure "${ref.column}" in row "${ref.row}" of table "${ref.table}"`);
}

interface Measured {
  date: string;
  /** CPU µs per operation, by process; `nats` and `postgres` included. */
  cpu: Record<Operation, Record<string, number>>;
}

function measured(doc: string): Measured {
  const figures = doc.slice(doc.indexOf('<!-- bench:figures:begin'));
  const date = /^- Date: (\S+)/m.exec(figures)?.[1];
  if (!date) throw new Error('docs/PERFORMANCE.md has no bench figures section with a date');
  const all = tables(figures);
  const cpu = {} as Measured['cpu'];
  for (const [name, op] of Object.entries(OPERATIONS) as [Operation, (typeof OPERATIONS)[Operation]][]) {
    const row: Record<string, number> = {};
    for (const [service, ref] of Object.entries(op.services)) row[service] = figure(all, ref);
    row['nats'] = figure(all, op.nats);
    row['postgres'] = figure(all, op.postgres);
    cpu[name] = row;
  }
  return { date, cpu };
}

/** Operations per second of each kind for `events` conversion events per second. */
const opsPerSecond = (events: number): Record<Operation, number> => ({
  conversion: events,
  delivery: events * ASSUMPTIONS.deliveriesPerEvent,
  affiliateList: events * ASSUMPTIONS.listReadsPerEvent,
});

/** Cores busy in `process` at `events` conversion events per second. */
function cores(m: Measured, process: string, events: number): number {
  const rates = opsPerSecond(events);
  let us = 0;
  for (const op of Object.keys(rates) as Operation[]) us += rates[op] * (m.cpu[op][process] ?? 0);
  return us / 1e6;
}

const SERVICES = ['gateway', 'events', 'commissions', 'dispatcher', 'affiliates'];
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const largest = ASSUMPTIONS.postgresSizes[ASSUMPTIONS.postgresSizes.length - 1]!;

function postgresSize(busy: number): string {
  const needed = busy / ASSUMPTIONS.postgresUtilisation;
  const size = ASSUMPTIONS.postgresSizes.find((s) => s >= needed);
  if (size !== undefined) return `one primary, ${size} vCPU`;
  return `beyond one primary: Citus, ${Math.ceil(needed / largest)} workers of ${largest} vCPU`;
}

function render(m: Measured): string {
  const out: string[] = [];
  const row = (cells: (string | number)[]) => out.push(`| ${cells.join(' | ')} |`);
  out.push(`Measured CPU µs per operation (docs/PERFORMANCE.md, bench of ${m.date}):`, '');
  row(['operation', ...SERVICES, 'nats-server', 'Postgres']);
  row(['---', ...SERVICES.map(() => '---:'), '---:', '---:']);
  for (const [name, op] of Object.entries(OPERATIONS) as [Operation, (typeof OPERATIONS)[Operation]][]) {
    const cpu = m.cpu[name];
    row([op.label, ...SERVICES.map((s) => (s in cpu ? fmt(cpu[s]!) : '–')), fmt(cpu['nats']!), fmt(cpu['postgres']!)]);
  }
  const a = ASSUMPTIONS;
  out.push(
    '',
    `Projection: per conversion event ${a.deliveriesPerEvent} webhook delivery and ${a.listReadsPerEvent} list reads; ` +
      `replicas at ${a.replicaUtilisation * 100} % of a core (at least ${a.minReplicas}); Postgres at ` +
      `${a.postgresUtilisation * 100} % of its vCPU; nats-server CPU × ${a.jetstreamReplicas} for R${a.jetstreamReplicas} streams.`,
    '',
  );
  row(['events/s', ...SERVICES.map((s) => `${s} replicas`), 'nats-server cores', 'Postgres cores busy', 'Postgres']);
  row(['---:', ...SERVICES.map(() => '---:'), '---:', '---:', '---']);
  for (const events of a.eventRates) {
    const replicas = SERVICES.map((s) =>
      Math.max(a.minReplicas, Math.ceil(cores(m, s, events) / a.replicaUtilisation)),
    );
    const nats = cores(m, 'nats', events) * a.jetstreamReplicas;
    const pg = cores(m, 'postgres', events);
    row([fmt(events), ...replicas, fmt(nats, 1), fmt(pg, 1), postgresSize(pg)]);
  }
  const pgPerEvent = cores(m, 'postgres', 1) * 1e6;
  const saturation = (largest * a.postgresUtilisation * 1e6) / pgPerEvent;
  const perEvent = BYTES_PER_ROW.commissions + BYTES_PER_ROW.processed_conversions;
  out.push(
    '',
    `One primary saturates at about **${fmt(Math.floor(saturation / 1000) * 1000)} events/s**: ` +
      `${fmt(pgPerEvent)} µs of Postgres CPU per event, ${largest} vCPU at ${a.postgresUtilisation * 100} %.`,
    '',
    '| stored | bytes per row (table and indexes) | at scale |',
    '|---|---:|---|',
    `| affiliates | ${fmt(BYTES_PER_ROW.affiliates)} | ${fmt(a.affiliates)} affiliates: ${fmt((BYTES_PER_ROW.affiliates * a.affiliates) / 1e9)} GB, which the primary's memory should hold (list and lookup pages come from its indexes) |`,
    `| commissions + processed_conversions, one level-0 commission per event | ${fmt(perEvent)} | ` +
      a.eventRates.map((r) => `${fmt(r)}/s: ${fmt((perEvent * r * 86_400) / 1e9)} GB a day`).join('; ') +
      ' |',
  );
  return out.join('\n') + '\n';
}

function writeInto(path: string, section: string): void {
  const doc = readFileSync(path, 'utf8');
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${path} has no capacity markers (${BEGIN} … ${END})`);
  writeFileSync(path, `${doc.slice(0, begin + BEGIN.length)}\n${section}${doc.slice(end)}`);
}

try {
  const section = render(measured(readFileSync(PERFORMANCE, 'utf8')));
  process.stdout.write(section);
  if (process.argv.includes('--write')) writeInto(SCALING, section);
} catch (err) {
  process.stderr.write(`capacity: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
