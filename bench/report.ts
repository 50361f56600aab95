import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import type { Figures } from './load.ts';
import { CPU_COLUMNS, type CpuColumn } from './procs.ts';

export interface Row {
  scenario: string;
  figures: Figures;
  /** The baseline's req/s this row is compared with, if any. */
  baseline?: number;
  /** CPU seconds each process used during the measured run. */
  cpu: Record<CpuColumn, number | null>;
}

export interface MemoryRow {
  process: string;
  /** RSS after start-up, before any load, bytes. */
  idle: number | null;
  /** Highest RSS sampled while the load ran, bytes. */
  sampled: number | null;
  /** VmHWM when the run ended (start-up included), bytes. */
  hwm: number | null;
  /** Whether the 150 MB target applies (the services; not the baseline). */
  target: boolean;
}

export interface Verdict {
  target: string;
  measured: string;
  pass: boolean;
}

const MB = 1024 * 1024;
export const mb = (bytes: number | null) => (bytes === null ? 'n/a' : `${(bytes / MB).toFixed(1)} MB`);
export const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(v < 10 ? 2 : 1) : 'n/a');
export const pct = (ratio: number) => `${(ratio * 100).toFixed(1)} %`;

/** A Markdown table with padded columns: readable on a terminal and in the document alike. */
export function table(header: string[], rows: string[][], align: ('l' | 'r')[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length), 3));
  const cell = (v: string, i: number) => (align[i] === 'r' ? v.padStart(widths[i]!) : v.padEnd(widths[i]!));
  const line = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (align[i] === 'r' ? `${'-'.repeat(w + 1)}:` : `:${'-'.repeat(w + 1)}`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

export function loadTable(rows: Row[]): string {
  return table(
    ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'responses', 'non-2xx', 'errors', 'vs bare express'],
    rows.map(({ scenario, figures: f, baseline }) => [
      scenario,
      f.rps.toFixed(0),
      ms(f.p50),
      ms(f.p99),
      String(f.requests),
      f.non2xx
        ? `${f.non2xx} (${Object.entries(f.statuses)
            .filter(([c]) => !c.startsWith('2'))
            .map(([c, n]) => `${c}×${n}`)
            .join(', ')})`
        : '0',
      String(f.errors),
      baseline ? pct(f.rps / baseline) : 'baseline',
    ]),
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
}

export function memoryTable(rows: MemoryRow[], limitBytes: number): string {
  return table(
    ['process', 'RSS before load', 'peak RSS under load', 'VmHWM at end', `target ≤ ${mb(limitBytes)}`],
    rows.map((r) => {
      const worst = Math.max(r.sampled ?? 0, r.hwm ?? 0);
      return [
        r.process,
        mb(r.idle),
        mb(r.sampled),
        mb(r.hwm),
        r.target
          ? r.hwm === null && r.sampled === null
            ? 'n/a'
            : worst <= limitBytes
              ? 'PASS'
              : 'MISS'
          : '(baseline)',
      ];
    }),
    ['l', 'r', 'r', 'r', 'l'],
  );
}

/** Microseconds of CPU per response, per process: where each scenario's work is done. */
export function cpuTable(rows: Row[], columns: readonly CpuColumn[] = CPU_COLUMNS, unit = 'response'): string {
  return table(
    [`CPU µs per ${unit}`, ...columns, 'total'],
    rows.map(({ scenario, figures, cpu }) => {
      const per = (s: number | null | undefined) =>
        s == null || figures.requests === 0 ? null : (s / figures.requests) * 1e6;
      const cells = columns.map((c) => per(cpu[c]));
      const total = cells.reduce<number>((a, v) => a + (v ?? 0), 0);
      return [scenario, ...cells.map((v) => (v === null ? 'n/a' : v.toFixed(0))), total.toFixed(0)];
    }),
    ['l', ...columns.map(() => 'r' as const), 'r'],
  );
}

export function verdictTable(verdicts: Verdict[]): string {
  return table(
    ['target', 'measured', 'result'],
    verdicts.map((v) => [v.target, v.measured, v.pass ? 'PASS' : 'MISS']),
    ['l', 'l', 'l'],
  );
}

const BEGIN = '<!-- bench:figures:begin (written by npm run bench; edits inside are overwritten) -->';
const END = '<!-- bench:figures:end -->';

/** Replaces the figures section of docs/PERFORMANCE.md (between the markers), keeping the rest of the file. */
export function writeFigures(path: string, section: string): void {
  const block = `${BEGIN}\n${section.trim()}\n${END}`;
  const current = existsSync(path) ? readFileSync(path, 'utf8') : '# Performance\n';
  const begin = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  const next =
    begin >= 0 && end > begin
      ? current.slice(0, begin) + block + current.slice(end + END.length)
      : `${current.trimEnd()}\n\n## Figures\n\n${block}\n`;
  writeFileSync(path, next);
}
