import t from 'tap';
import { loadGatewayConfig } from '@platform/gateway/config';
import { PASSWORD_COST } from '@platform/shared/passwords';
import { signInHttp, startDashboardPlatform } from '../helpers/dashboard.ts';

// A gateway checks one password at a time (scrypt takes 128 MiB beside the heap) with a short queue: sign-ins past
// it are refused with 503 in the error envelope, and, since no password was checked, their attempts do not count.
const { platform } = await startDashboardPlatform(t, {
  env: { PASSWORD_HASH_COST: String(PASSWORD_COST) }, // the work factor is what this file is about
});
const base = platform.baseUrl;
const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

async function verifications(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${platform.gateways[0]!.opsPort}/metrics`)).text();
  let total = 0;
  for (const m of text.matchAll(/^dashboard_password_verifications_total\{[^}]*\} (\d+)$/gm)) total += Number(m[1]);
  return total;
}

t.test('40 sign-ins to 40 accounts at once: the queue’s overflow gets 503 and is not counted', async (t) => {
  const before = await verifications();
  const emails = Array.from({ length: 40 }, (_, i) => `busy-${i}@example.com`);
  const answers = await Promise.all(emails.map((email) => signInHttp(base, email, 'some password')));
  const checked = answers.filter((a) => a.status === 401);
  const busy = answers.filter((a) => a.status === 503);
  t.equal(checked.length + busy.length, 40, 'each was checked (401) or refused as busy (503)');
  t.ok(
    checked.length >= 1 && checked.length <= 17,
    `one running and at most 16 waiting were checked: ${checked.length}`,
  );
  t.ok(busy.length >= 23, `the rest were refused: ${busy.length}`);
  for (const a of busy) {
    t.same(a.body.error, {
      code: 'UNAVAILABLE',
      message: 'Too many passwords are being checked; try again in a moment',
      request_id: a.headers.get('x-request-id'),
    });
    t.equal(a.headers.get('retry-after'), '1');
  }
  t.equal((await verifications()) - before, checked.length, 'scrypt ran once per checked sign-in');

  const counts = new Map(
    (
      await platform.sql<{ subject: string; count: number }[]>`
        select subject, count from dashboard_signin_failures where subject like 'account:busy-%'`
    ).map((r) => [r.subject, r.count]),
  );
  emails.forEach((email, i) => {
    const count = counts.get(`account:${email}`) ?? 0;
    t.equal(count, answers[i]!.status === 401 ? 1 : 0, `${email}: ${answers[i]!.status}, counted ${count}`);
  });
  const [ip] = await platform.sql<{ count: number }[]>`
    select count from dashboard_signin_failures where subject = 'ip:127.0.0.1'`;
  t.equal(ip!.count, checked.length, 'the address is charged for the checked attempts only');
});

t.test('PASSWORD_HASH_COST below today’s cost stops a gateway outside APP_ENV=test, naming the variable', async (t) => {
  for (const APP_ENV of ['production', 'development'])
    t.throws(() => loadGatewayConfig({ APP_ENV, ENCRYPTION_KEY, PASSWORD_HASH_COST: '16' }), {
      name: 'ConfigError',
      message: `configuration: PASSWORD_HASH_COST must be ${PASSWORD_COST} unless APP_ENV=test`,
    });
  t.throws(() => loadGatewayConfig({ APP_ENV: 'test', PASSWORD_HASH_COST: '9' }), { name: 'ConfigError' }, 'floor');
  t.throws(() => loadGatewayConfig({ PASSWORD_HASH_COST: '18' }), { name: 'ConfigError' }, 'ceiling');
  t.equal(loadGatewayConfig({ APP_ENV: 'production', ENCRYPTION_KEY }).PASSWORD_HASH_COST, PASSWORD_COST);
  t.equal(loadGatewayConfig({ APP_ENV: 'test', PASSWORD_HASH_COST: '10' }).PASSWORD_HASH_COST, 10);
});
