import t from 'tap';
import { Registry } from 'prom-client';
import { labelledDatabaseGauge, databaseGauge } from '@platform/shared/database-gauge';
import { createTestDatabase } from '../helpers/platform.ts';

// The gauges read from Postgres when /metrics is scraped: a labelled one shows exactly the series of its last read
// (a label set it no longer answers drops out); a read that fails keeps the last values instead of zeros.

const { sql } = await createTestDatabase(t, { migrated: false });
await sql`create table backlog (endpoint_id text primary key, deliveries int not null)`;
await sql`insert into backlog values ('we_a', 3), ('we_b', 7)`;

const registry = new Registry();
let failing = false;
const read = async <T>(query: () => Promise<T>): Promise<T> => {
  if (failing) await sql`select * from no_such_table`;
  return query();
};
labelledDatabaseGauge({
  registry,
  name: 'test_backlog',
  help: 'backlog by endpoint',
  labelNames: ['endpoint_id'],
  read: () =>
    read(async () =>
      (await sql<{ endpoint_id: string; deliveries: number }[]>`select * from backlog order by endpoint_id`).map(
        (r) => ({ labels: { endpoint_id: r.endpoint_id }, value: r.deliveries }),
      ),
    ),
});
databaseGauge({
  registry,
  name: 'test_total',
  help: 'total backlog',
  read: () =>
    read(async () => (await sql<{ n: number }[]>`select coalesce(sum(deliveries), 0)::int as n from backlog`)[0]!.n),
});
const samples = async () =>
  (await registry.metrics())
    .split('\n')
    .filter((line) => line.startsWith('test_'))
    .sort();

t.test('each scrape shows the rows as they are', async (t) => {
  t.same(await samples(), [
    'test_backlog{endpoint_id="we_a"} 3',
    'test_backlog{endpoint_id="we_b"} 7',
    'test_total 10',
  ]);
  await sql`delete from backlog where endpoint_id = 'we_a'`;
  await sql`update backlog set deliveries = 9 where endpoint_id = 'we_b'`;
  t.same(await samples(), ['test_backlog{endpoint_id="we_b"} 9', 'test_total 9'], "we_a's series drops out");
});

t.test('a read that fails keeps the last values', async (t) => {
  failing = true;
  t.teardown(() => {
    failing = false;
  });
  await sql`update backlog set deliveries = 1`;
  t.same(await samples(), ['test_backlog{endpoint_id="we_b"} 9', 'test_total 9']);
  failing = false;
  t.same(await samples(), ['test_backlog{endpoint_id="we_b"} 1', 'test_total 1'], 'and the next read replaces them');
});
