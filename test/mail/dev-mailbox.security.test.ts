import t from 'tap';
import { encryptionKey } from '@platform/shared/config';
import { enqueueMail } from '@platform/shared/mail';
import { loadGatewayConfig } from '@platform/gateway/config';
import { startGateway } from '@platform/gateway/service';
import { captureLogger, startPlatform } from '../helpers/platform.ts';
import { startSmtpServer } from '../helpers/smtp.ts';
import { startDispatcher } from '../helpers/webhooks.ts';

// The development mailbox shows what the development dispatcher kept, and nothing else: in production the route does
// not exist, and a mail sent over SMTP is not in it (its content is gone from Postgres).
const platform = await startPlatform(t);

t.test('in production GET /dev/mailbox does not exist', async (t) => {
  const production = await startGateway(
    loadGatewayConfig({
      ...platform.env,
      APP_ENV: 'production',
      ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
      PASSWORD_HASH_COST: '17',
    }),
    captureLogger('gateway-production').log,
  );
  t.teardown(() => production.close());
  const res = await fetch(`http://127.0.0.1:${production.port}/dev/mailbox`);
  t.equal(res.status, 404);
  t.match(await res.json(), { error: { code: 'NOT_FOUND' } });
  const here = await fetch(`${platform.baseUrl}/dev/mailbox`);
  t.equal(here.status, 200, 'while the test gateway has it');
});

t.test('a mail sent over SMTP is not in the mailbox', async (t) => {
  const smtp = await startSmtpServer(t);
  await startDispatcher(t, platform, { SMTP_URL: smtp.url });
  const m = await platform.merchant();
  await platform.sql.begin((tx) =>
    enqueueMail(tx, encryptionKey({ APP_ENV: 'test' }), {
      merchantId: m.id,
      kind: 'verify_email',
      to: 'smtp@example.com',
      subject: 'Secret link',
      content: { text: 'token=s3cret', html: '<p>token=s3cret</p>', links: [] },
    }),
  );
  await smtp.waitFor(1);
  const res = await fetch(`${platform.baseUrl}/dev/mailbox`);
  const body = (await res.json()) as { mails: unknown[] };
  t.same(body.mails, []);
});
