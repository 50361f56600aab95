import { createPlatformKey } from '../scripts/admin/platform-keys.ts';
import { measurer, type BenchContext, type PartResult } from './context.ts';
import type { Target } from './load.ts';
import { pct, table } from './report.ts';

/**
 * The platform payment API (BENCH_ONLY=payments): payment intents created and confirmed in one request
 * (`confirm=true` with pm_card_visa: the sandbox processor, the ledger's movement and balance transaction) through the
 * gateway and the payments service, beside the bare express server parsing and echoing the same form, in the same run.
 * Target: at least 20 % of the bare rate. Eight test-mode platform keys at 60,000 requests a minute each.
 */
const TARGET_RATIO = 0.2;
const PATH = '/v1/payment_intents';

export async function runPayments(ctx: BenchContext): Promise<PartResult> {
  const payments = await ctx.service('payments');
  const keys: string[] = [];
  for (let i = 0; i < 8; i++) keys.push((await createPlatformKey(ctx.sql, 'test', 60_000)).key);
  let n = 0;
  const body = () =>
    `amount=${1000 + (n++ % 9000)}&currency=usd&payment_method=pm_card_visa&confirm=true&metadata[order]=${n}`;
  const form = 'application/x-www-form-urlencoded';
  const targets = {
    bare: { base: ctx.bareUrl, method: 'POST', path: PATH, keys, body, contentType: form },
    gateway: { base: ctx.gatewayUrl, method: 'POST', path: PATH, keys, body, contentType: form },
  } satisfies Record<string, Target>;

  const probe = await fetch(`${ctx.gatewayUrl}${PATH}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keys[0]}`, 'content-type': form },
    body: body(),
  });
  const probed = (await probe.json()) as { status?: string };
  if (probe.status !== 200 || probed.status !== 'succeeded')
    throw new Error(`the first payment intent answered ${probe.status}: ${JSON.stringify(probed)}`);

  const m = measurer(ctx, [ctx.gateway, payments, ctx.bare]);
  const bare = await m.closed(`bare express POST ${PATH}`, targets.bare);
  const real = await m.closed(`gateway POST ${PATH} (confirm=true)`, targets.gateway);
  const [{ n: succeeded } = { n: 0 }] = await ctx.sql<{ n: number }[]>`
    select count(*)::int as n from payment_intents where status = 'succeeded'`;
  const ratio = real.figures.rps / bare.figures.rps;
  const row = (name: string, f: typeof bare.figures) => [
    name,
    f.rps.toFixed(0),
    String(f.p50),
    String(f.p99),
    String(f.non2xx),
  ];
  const section = [
    '### Payment intents',
    '',
    `Payment intents created and confirmed with pm_card_visa in one request, ${ctx.settings.connections} connections, ` +
      `${ctx.settings.duration} s: ${pct(ratio)} of bare express (target ${pct(TARGET_RATIO)}); ${succeeded} succeeded in all.`,
    '',
    table(
      ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx'],
      [row(`bare express POST ${PATH}`, bare.figures), row(`gateway POST ${PATH}`, real.figures)],
      ['l', 'r', 'r', 'r', 'r'],
    ),
    '',
  ].join('\n');
  return {
    section,
    memRows: [],
    verdicts: [
      {
        target: `POST ${PATH} confirmed ≥ ${pct(TARGET_RATIO)} of bare express`,
        measured: `${real.figures.rps.toFixed(0)}/s, ${pct(ratio)}`,
        pass: ratio >= TARGET_RATIO && real.figures.non2xx === 0,
      },
    ],
  };
}
