import t from 'tap';
import { dashboardExpressions, exportedNames, metricNames, ruleExpressions } from '../helpers/promql.ts';

// The lexer that lists the metric names of the alert rules and the dashboard (test/observability/metrics.happy.test.ts
// checks each is exported): it must find every name and nothing else.

t.test('metric names of PromQL expressions, without functions, labels, durations or keywords', async (t) => {
  const cases: [string, string[]][] = [
    ['up', ['up']],
    ['sum by (route) (rate(http_requests_total{status=~"5.."}[5m]))', ['http_requests_total']],
    [
      'histogram_quantile(0.99, sum by (namespace, route, le) (rate(http_request_duration_seconds_bucket[$__rate_interval])))',
      ['http_request_duration_seconds_bucket'],
    ],
    [
      'max by (reason) (webhook_endpoints_disabled{reason!="manual"}) > max by (reason) (webhook_endpoints_disabled offset 15m)',
      ['webhook_endpoints_disabled'],
    ],
    [
      'a_total / on (service) group_left (version) b_info and bool c:recorded > 1e3',
      ['a_total', 'b_info', 'c:recorded'],
    ],
    ["topk(10, max without (instance) (x{a='}b'}))", ['x']],
    ['sum(rate(operations_total{code="created"}[5m])) or vector(0)', ['operations_total']],
  ];
  for (const [expr, names] of cases) t.same(metricNames(expr).sort(), names.sort(), expr);
});

t.test('every rule and every dashboard panel reads at least one metric', async (t) => {
  const expressions = [...ruleExpressions(), ...dashboardExpressions()];
  t.ok(expressions.length > 20, `${expressions.length} expressions`);
  for (const { where, expr } of expressions) t.ok(metricNames(expr).length > 0, `${where}: ${expr}`);
});

t.test('names with samples in an exposition; HELP and TYPE alone do not count', async (t) => {
  const exposition = [
    '# HELP a_total A counter',
    '# TYPE a_total counter',
    'a_total{service="x"} 3',
    '# HELP never_set A counter with labels, never incremented',
    '# TYPE never_set counter',
    'b_seconds_bucket{le="+Inf"} 1',
    'c 0',
  ].join('\n');
  t.same([...exportedNames(exposition)].sort(), ['a_total', 'b_seconds_bucket', 'c']);
});
