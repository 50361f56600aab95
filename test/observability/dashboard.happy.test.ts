import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/platform.ts';

// The Grafana dashboard of deploy/observability as Grafana imports it: one Prometheus data source chosen at import
// (a variable, so no data source uid of ours is baked in), panels with unique ids that do not overlap on the grid,
// and every query on that data source. test/observability/metrics.happy.test.ts checks the metrics its queries read.

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: { expr: string; refId: string; datasource?: { uid: string } }[];
}
const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/observability/dashboard.json'), 'utf8')) as {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: string }[] };
};

t.test('a stable uid and a Prometheus data source variable', async (t) => {
  t.equal(dashboard.uid, 'affiliate-platform');
  t.match(dashboard.templating.list, [{ name: 'datasource', type: 'datasource', query: 'prometheus' }]);
});

t.test('every panel has its own id and place on the grid', async (t) => {
  const ids = dashboard.panels.map((p) => p.id);
  t.equal(new Set(ids).size, ids.length, 'unique ids');
  const taken = new Map<string, string>();
  for (const p of dashboard.panels) {
    const { x, y, w, h } = p.gridPos;
    t.ok(x >= 0 && w > 0 && x + w <= 24, `${p.title}: within the 24 columns`);
    for (let row = y; row < y + h; row++)
      for (let col = x; col < x + w; col++) {
        const other = taken.get(`${row}:${col}`);
        if (other) t.fail(`${p.title} overlaps ${other}`);
        taken.set(`${row}:${col}`, p.title);
      }
  }
});

t.test('every query runs on the chosen data source and reads something', async (t) => {
  const panels = dashboard.panels.filter((p) => p.type !== 'row');
  t.ok(panels.length >= 15, `${panels.length} panels`);
  for (const p of panels) {
    t.same(p.datasource, { type: 'prometheus', uid: '${datasource}' }, `${p.title}: data source`);
    t.ok(p.targets?.length, `${p.title}: has queries`);
    for (const q of p.targets ?? []) {
      t.equal(q.datasource?.uid, '${datasource}', `${p.title} ${q.refId}: data source`);
      t.ok(q.expr.trim().length > 0, `${p.title} ${q.refId}: an expression`);
    }
  }
});
