import t from 'tap';
import {
  dashboardMerchant,
  PASSWORD,
  sessionRequest,
  signInHttp,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';
import { registerEndpoint } from '../helpers/webhooks.ts';

// Revealing a webhook secret opens it at its own endpoint only: a secret copied from another endpoint (a database
// writer without the key) is refused in the envelope, 409 with what to do, never shown and never a 500.
const { platform } = await startDashboardPlatform(t);
const merchant = await dashboardMerchant(platform, 'scale');
const session = await signInHttp(platform.baseUrl, merchant.email);
const reveal = (endpointId: string) =>
  sessionRequest(platform.baseUrl, session, 'POST', `/dashboard/api/webhook_endpoints/${endpointId}/reveal_secret`, {
    password: PASSWORD,
  });

t.test("a secret copied from another endpoint is not revealed as this one's", async (t) => {
  const first = await registerEndpoint(platform, merchant.id, { url: 'http://127.0.0.1:9/first' });
  const second = await registerEndpoint(platform, merchant.id, { url: 'http://127.0.0.1:9/second' });
  t.same((await reveal(second.id)).body, { secret: second.secret }, 'its own secret, before');

  await platform.sql`
    update webhook_endpoints set secret_encrypted = (select secret_encrypted from webhook_endpoints where id = ${first.id})
    where merchant_id = ${merchant.id} and id = ${second.id}`;
  const refused = await reveal(second.id);
  t.equal(refused.status, 409);
  t.match(refused.body, {
    error: { code: 'CONFLICT', message: 'The signing secret cannot be read; rotate it to get a new one' },
  });
  t.notMatch(refused.text, first.secret, 'the other endpoint’s secret is not shown');
  t.same((await reveal(first.id)).body, { secret: first.secret }, 'where it was written, it opens');
});
