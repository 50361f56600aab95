import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The operator kit's files live in deploy/observability (one source); Helm reads only files inside the chart, so
 * the chart carries copies under files/observability for its PrometheusRule and dashboard ConfigMap.
 * `npm run chart:observability` writes them; test/deploy/chart-observability.happy.test.ts checks that they are the same.
 */
export const OBSERVABILITY_COPIES = ['alerts.rules.yml', 'dashboard.json'].map((name) => ({
  source: join(ROOT, 'deploy/observability', name),
  copy: join(ROOT, 'charts/affiliate-platform/files/observability', name),
}));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const { source, copy } of OBSERVABILITY_COPIES) {
    mkdirSync(dirname(copy), { recursive: true });
    copyFileSync(source, copy);
    process.stderr.write(`chart-observability: wrote ${copy}\n`);
  }
}
