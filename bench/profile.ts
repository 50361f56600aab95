import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { table } from './report.ts';

/**
 * Summarises a V8 .cpuprofile (written by `node --cpu-prof`, e.g. by `BENCH_PROFILE=1 npm run bench`): self time
 * by package or source area, and the functions with the most self time.
 * Also a command: `npx node bench/profile.ts <file.cpuprofile> [top]`.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** node_modules/<package>, the repository area (services/gateway, shared…), node:internal, or (idle) and the like. */
function area(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const mod = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (mod) return mod[1]!;
  if (url.startsWith('node:')) return url.replace(/^node:internal\/.*/, 'node:internal');
  const repo = /\/(services\/[^/]+|shared|bench|scripts)\//.exec(url);
  return repo ? repo[1]! : url;
}

export function summariseProfile(file: string, top = 15): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self]
    .filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)')
    .reduce((a, [, t]) => a + t, 0);
  const busy = total - idle;

  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, t] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    const a = area(url, functionName);
    byArea.set(a, (byArea.get(a) ?? 0) + t);
    const where = url
      ? `${url.replace(/^.*\/(node_modules|services|shared)\//, '$1/').replace(/^file:\/\//, '')}:${lineNumber + 1}`
      : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + t);
  }
  const share = (t: number) => `${((t / busy) * 100).toFixed(1)} %`;
  const rank = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    `${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s on CPU (${((busy / total) * 100).toFixed(0)} %)`,
    'self time by area (share of CPU time):',
    table(
      ['area', 'share'],
      rank(byArea).map(([a, t]) => [a, share(t)]),
      ['l', 'r'],
    ),
    'functions with the most self time:',
    table(
      ['function', 'share'],
      rank(byFunction).map(([f, t]) => [f, share(t)]),
      ['l', 'r'],
    ),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: npx node bench/profile.ts <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  process.stdout.write(summariseProfile(file, top ? Number(top) : 25) + '\n');
}
