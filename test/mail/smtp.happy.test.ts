import t from 'tap';
import { encryptionKey } from '@platform/shared/config';
import { enqueueMail } from '@platform/shared/mail';
import { startPlatform } from '../helpers/platform.ts';
import { linksOf, startSmtpServer } from '../helpers/smtp.ts';
import { startDispatcher } from '../helpers/webhooks.ts';

// E-mail for real: a mail written in a transaction reaches a real SMTP server (in this process) once, from MAIL_FROM,
// with a plain-text and an HTML part, and is recorded sent with its content gone from Postgres.
const platform = await startPlatform(t);
const smtp = await startSmtpServer(t);
const env = { SMTP_URL: smtp.url, MAIL_FROM: 'Acme platform <mail@acme.test>' };
const dispatcher = await startDispatcher(t, platform, env);
const key = encryptionKey({ APP_ENV: 'test' });
const merchant = await platform.merchant();

const mail = (to: string, link = 'https://app.test/dashboard/verify?token=abc') => ({
  merchantId: merchant.id,
  kind: 'verify_email' as const,
  to,
  subject: 'Verify your e-mail address',
  content: { text: `Open ${link}\n`, html: `<p><a href="${link}">Verify</a></p>`, links: [link] },
});

t.test('a committed mail arrives once, from MAIL_FROM, with a text and an HTML part', async (t) => {
  const before = smtp.received.length;
  const id = await platform.sql.begin((tx) => enqueueMail(tx, key, mail('new@example.com')));
  const [got] = (await smtp.waitFor(before + 1)).slice(before);
  t.same(got!.to, ['new@example.com']);
  t.equal(got!.from, 'mail@acme.test');
  t.match(got!.raw, /^From: Acme platform <mail@acme\.test>/m);
  t.match(got!.raw, /^Subject: Verify your e-mail address/m);
  t.match(got!.raw, /multipart\/alternative/);
  t.match(got!.raw, /Content-Type: text\/plain/);
  t.match(got!.raw, /Content-Type: text\/html/);
  t.same(linksOf(got!.raw), ['https://app.test/dashboard/verify?token=abc']);
  t.equal(got!.messageId, `<${id}@acme.test>`, 'the Message-ID is the mail id: the same on any resend');
  // Another poll or two would send it again if it were not recorded.
  await new Promise((r) => setTimeout(r, 2500));
  t.equal(smtp.received.length, before + 1, 'sent once');
  const [row] = await platform.sql`select sent_at, sent_via, content_encrypted, attempts from mails where id = ${id}`;
  t.ok(row!['sent_at']);
  t.equal(row!['sent_via'], 'smtp');
  t.equal(row!['content_encrypted'], null, 'the content (a link is a credential) is not kept once sent');
  t.equal(row!['attempts'], 1);
  t.ok(
    dispatcher.logs.some((l) => l.includes('"msg":"mail sent"') && l.includes(id)),
    'the sending is logged by id',
  );
  t.notOk(
    dispatcher.logs.some((l) => l.includes('token=abc') || l.includes('new@example.com')),
    'over SMTP neither the link nor the address is logged',
  );
});

t.test('a mail whose transaction rolls back is never sent', async (t) => {
  const before = smtp.received.length;
  await platform.sql
    .begin(async (tx) => {
      await enqueueMail(tx, key, mail('rolled-back@example.com'));
      throw new Error('the change failed');
    })
    .catch(() => {});
  await platform.sql.begin((tx) => enqueueMail(tx, key, mail('after@example.com')));
  await smtp.waitFor(before + 1);
  await new Promise((r) => setTimeout(r, 1500));
  t.same(
    smtp.received.slice(before).map((m) => m.to[0]),
    ['after@example.com'],
  );
});

t.test('with two replicas sending, each of many mails arrives exactly once', async (t) => {
  await startDispatcher(t, platform, env);
  const before = smtp.received.length;
  const ids = await platform.sql.begin(async (tx) => {
    const made: string[] = [];
    for (let i = 0; i < 30; i++) made.push(await enqueueMail(tx, key, mail(`many-${i}@example.com`)));
    return made;
  });
  await smtp.waitFor(before + 30);
  await new Promise((r) => setTimeout(r, 2500));
  const got = smtp.received.slice(before);
  t.equal(got.length, 30);
  t.same(new Set(got.map((m) => m.messageId)).size, 30, 'no mail twice');
  const [row] =
    await platform.sql`select count(*)::int as n from mails where id in ${platform.sql(ids)} and sent_at is not null`;
  t.equal(row!['n'], 30);
});
