import t from 'tap';
import { ConfigError, encryptionKey } from '@platform/shared/config';
import { enqueueMail } from '@platform/shared/mail';
import { loadDispatcherConfig } from '@platform/dispatcher/config';
import { startPlatform } from '../helpers/platform.ts';
import { startSmtpServer } from '../helpers/smtp.ts';
import { startDispatcher } from '../helpers/webhooks.ts';

// Mail that cannot be sent: a server that says "later" gets the mail again later (once it takes it, never more); a
// server that refuses it for good is not asked again; production without SMTP_URL or MAIL_FROM does not start.
const platform = await startPlatform(t);
const smtp = await startSmtpServer(t);
await startDispatcher(t, platform, { SMTP_URL: smtp.url, MAIL_FROM: 'mail@acme.test' });
const key = encryptionKey({ APP_ENV: 'test' });
const merchant = await platform.merchant();
const enqueue = (to: string) =>
  platform.sql.begin((tx) =>
    enqueueMail(tx, key, {
      merchantId: merchant.id,
      kind: 'verify_email',
      to,
      subject: 'Hello',
      content: { text: 'Hello', html: '<p>Hello</p>', links: [] },
    }),
  );
const row = async (id: string) =>
  (
    await platform.sql`select sent_at, failed_at, attempts, last_error, next_attempt_at from mails where id = ${id}`
  )[0]!;

t.test('a temporary refusal (451) is retried after a backoff, and the mail then arrives once', async (t) => {
  smtp.refuseNext(451);
  const before = smtp.received.length;
  const id = await enqueue('later@example.com');
  // The attempt is counted when the mail is leased, its failure recorded once the server has answered.
  for (let i = 0; i < 200 && (await row(id))['last_error'] === null; i++) await new Promise((r) => setTimeout(r, 50));
  const failed = await row(id);
  t.equal(failed['sent_at'], null, 'not sent at the first attempt');
  t.match(failed['last_error'], /451|later/);
  t.ok(failed['next_attempt_at'] > new Date(Date.now() + 2000), 'the next attempt waits (5 s)');
  await smtp.waitFor(before + 1, 20_000);
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(smtp.received.length, before + 1, 'arrives once');
  const sent = await row(id);
  t.ok(sent['sent_at']);
  t.equal(sent['attempts'], 2);
});

t.test('a permanent refusal (550) is recorded and not retried', async (t) => {
  smtp.refuseNext(550);
  const before = smtp.received.length;
  const id = await enqueue('nobody@example.com');
  for (let i = 0; i < 100 && !(await row(id))['failed_at']; i++) await new Promise((r) => setTimeout(r, 50));
  const failed = await row(id);
  t.ok(failed['failed_at'], 'recorded as refused for good');
  t.equal(failed['sent_at'], null);
  await new Promise((r) => setTimeout(r, 2500));
  t.equal((await row(id))['attempts'], 1, 'not tried again');
  t.equal(smtp.received.length, before);
});

t.test('an unreachable SMTP server keeps the mail for later, never drops it', async (t) => {
  const other = await startPlatform(t);
  await startDispatcher(t, other, { SMTP_URL: 'smtp://127.0.0.1:1', MAIL_FROM: 'mail@acme.test' });
  const m = await other.merchant();
  const id = await other.sql.begin((tx) =>
    enqueueMail(tx, key, {
      merchantId: m.id,
      kind: 'verify_email',
      to: 'x@example.com',
      subject: 'Hi',
      content: { text: 'Hi', html: '<p>Hi</p>', links: [] },
    }),
  );
  const state = async () =>
    (await other.sql`select attempts, sent_at, failed_at, content_encrypted from mails where id = ${id}`)[0]!;
  for (let i = 0; i < 100 && (await state())['attempts'] < 1; i++) await new Promise((res) => setTimeout(res, 50));
  await new Promise((res) => setTimeout(res, 300));
  const r = await state();
  t.equal(r['sent_at'], null);
  t.equal(r['failed_at'], null, 'a connection failure is not a refusal: retried');
  t.ok(r['content_encrypted'], 'the content is kept until it is sent');
});

t.test(
  'production needs SMTP_URL and MAIL_FROM: without either the dispatcher does not start, naming it',
  async (t) => {
    const production = { APP_ENV: 'production', ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };
    t.throws(() => loadDispatcherConfig({ ...production, MAIL_FROM: 'mail@acme.test' }), {
      name: 'ConfigError',
      variable: 'SMTP_URL',
      message: /SMTP_URL is required when APP_ENV=production/,
    });
    t.throws(() => loadDispatcherConfig({ ...production, SMTP_URL: 'smtp://mail.acme.test:587' }), {
      name: 'ConfigError',
      variable: 'MAIL_FROM',
    });
    t.throws(() => loadDispatcherConfig({ SMTP_URL: 'http://mail.acme.test' }), ConfigError, 'an SMTP URL or nothing');
    t.ok(loadDispatcherConfig({ ...production, SMTP_URL: 'smtps://u:p@mail.acme.test:465', MAIL_FROM: 'a@acme.test' }));
    t.equal(loadDispatcherConfig({ APP_ENV: 'development' }).SMTP_URL, undefined, 'optional elsewhere');
  },
);
