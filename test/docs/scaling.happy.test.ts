import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import t from 'tap';
import { createTestDatabase, ROOT } from '../helpers/platform.ts';

// docs/SCALING.md plans the move to Citus table by table: a table the migrations add without a class there, or a key
// without merchant_id that its list does not name, fails here. Its capacity section is the output of
// `npm run capacity`, made from docs/PERFORMANCE.md's figures: a new bench run without `-- --write` fails too.

const SCALING = `${ROOT}docs/SCALING.md`;
const CLASSES = new Set(['distributed', 'reference', 'local']);

/** The rows of the first Markdown table after `heading`, as trimmed cells, the header and rule dropped. */
function tableAfter(doc: string, heading: string): string[][] {
  const start = doc.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/SCALING.md has no heading "${heading}"`);
  const lines = doc.slice(start).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
  }
  return rows;
}

/** A table's name from its first cell, written `name` in code. */
const tableName = (cell: string) => /^`([a-z_][a-z0-9_]*)`$/.exec(cell)?.[1];

t.test('docs/SCALING.md classifies every table and lists every key without merchant_id', async (t) => {
  const { sql } = await createTestDatabase(t);
  const doc = readFileSync(SCALING, 'utf8');

  // Every table of the schema: partitions are their parent's, an extension's own tables are not ours.
  const tables = await sql<{ name: string; has_merchant: boolean; keys_without_merchant: number }[]>`
    select c.relname as name,
           m.attnum is not null as has_merchant,
           (select count(*)::int from pg_index x
            where x.indrelid = c.oid and x.indisunique and (m.attnum is null or not m.attnum = any(x.indkey))
           ) as keys_without_merchant
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    left join pg_attribute m on m.attrelid = c.oid and m.attname = 'merchant_id' and not m.attisdropped
    where c.relkind in ('r', 'p') and not c.relispartition
      and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg_toast%'
      and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid
                      and d.deptype = 'e')
    order by c.relname`;
  t.ok(tables.length > 0, 'the migrated schema has tables');

  const classified = new Map<string, string>();
  for (const row of tableAfter(doc, '## Citus: every table classified')) {
    const name = tableName(row[0]!);
    if (t.ok(name, `"${row[0]}" names a table in code`) && t.ok(CLASSES.has(row[1]!), `${name}: class "${row[1]}"`)) {
      classified.set(name!, row[1]!);
    }
  }
  const inSchema = new Set(tables.map((r) => r.name));
  t.strictSame(
    tables.map((r) => r.name).filter((name) => !classified.has(name)),
    [],
    'every table of the migrated schema is classified',
  );
  t.strictSame(
    [...classified.keys()].filter((name) => !inSchema.has(name)),
    [],
    'every classified table is in the migrated schema',
  );
  for (const r of tables.filter((r) => classified.get(r.name) === 'distributed' && !r.has_merchant)) {
    // A distributed table without the column must say that it gets one, or what it is distributed by instead.
    const needs = tableAfter(doc, '## Citus: every table classified').find((row) => tableName(row[0]!) === r.name)!;
    t.match(needs[2], /merchant/, `${r.name} has no merchant_id yet: its plan says how it gets one`);
  }

  const lacking = tables.filter((r) => r.has_merchant && r.keys_without_merchant > 0).map((r) => r.name);
  const listed = tableAfter(doc, '### Keys without `merchant_id`').map((row) => tableName(row[0]!));
  t.strictSame(listed, lacking, `the tables with a key without merchant_id, in order (${lacking.length} today)`);
});

t.test('npm run capacity prints the projection that docs/SCALING.md holds', async (t) => {
  const run = await promisify(execFile)(process.execPath, [`${ROOT}scripts/capacity.ts`], {
    cwd: ROOT,
  });
  for (const rate of ['1,000', '10,000', '100,000']) {
    t.match(run.stdout, new RegExp(`^\\| ${rate} \\|( \\d+ \\|){5} [\\d.]+ \\| [\\d.]+ \\| (one primary|beyond)`, 'm'));
  }
  t.match(run.stdout, /One primary saturates at about \*\*[\d,]+ events\/s\*\*/);
  t.match(run.stdout, /100,000,000 affiliates: [\d,]+ GB/);
  const doc = readFileSync(SCALING, 'utf8');
  const section = /<!-- capacity:begin[^\n]*-->\n([\s\S]*?)<!-- capacity:end -->/.exec(doc)?.[1];
  t.equal(section, run.stdout, 'docs/SCALING.md has the current projection (npm run capacity -- --write)');
});
