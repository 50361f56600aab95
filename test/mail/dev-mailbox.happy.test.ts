import t from 'tap';
import { encryptionKey } from '@platform/shared/config';
import { enqueueMail } from '@platform/shared/mail';
import { startPlatform } from '../helpers/platform.ts';
import { startDispatcher } from '../helpers/webhooks.ts';

// Outside production without SMTP_URL, mails go to the development mailbox: GET /dev/mailbox on the gateway lists
// them newest first (to, subject, text, links), and the dispatcher logs each on one line.
const platform = await startPlatform(t);
const dispatcher = await startDispatcher(t, platform);
const key = encryptionKey({ APP_ENV: 'test' });
const merchant = await platform.merchant();

const send = (to: string, link: string) =>
  platform.sql.begin((tx) =>
    enqueueMail(tx, key, {
      merchantId: merchant.id,
      kind: 'verify_email',
      to,
      subject: `For ${to}`,
      content: { text: `Open ${link}`, html: `<a href="${link}">Open</a>`, links: [link] },
    }),
  );

const mailbox = async () => {
  const res = await fetch(`${platform.baseUrl}/dev/mailbox`);
  return { status: res.status, cache: res.headers.get('cache-control'), body: (await res.json()) as { mails: any[] } };
};

t.test('GET /dev/mailbox lists the mails newest first, with to, subject, text and links', async (t) => {
  const first = await send('first@example.com', 'http://localhost:8080/dashboard/verify?token=one');
  const second = await send('second@example.com', 'http://localhost:8080/dashboard/verify?token=two');
  let box = await mailbox();
  for (let i = 0; i < 300 && box.body.mails.length < 2; i++) {
    await new Promise((r) => setTimeout(r, 50));
    box = await mailbox();
  }
  t.equal(box.status, 200);
  t.equal(box.cache, 'no-store');
  t.match(box.body.mails, [
    {
      id: second,
      to: 'second@example.com',
      subject: 'For second@example.com',
      text: 'Open http://localhost:8080/dashboard/verify?token=two',
      links: ['http://localhost:8080/dashboard/verify?token=two'],
      created_at: String,
    },
    { id: first, to: 'first@example.com', links: ['http://localhost:8080/dashboard/verify?token=one'] },
  ]);
  const lines = dispatcher.logs.filter((l) => l.includes('development mailbox'));
  t.equal(lines.length, 2, 'each mail logged once');
  // Both may go out in one pass, in either order: the line is found by the mail's id.
  const line = lines.find((l) => l.includes(first))!;
  t.match(JSON.parse(line), {
    mail_id: first,
    to: 'first@example.com',
    links: ['http://localhost:8080/dashboard/verify?token=one'],
  });
  t.notOk(line.includes('\n'), 'on one line');
  const [row] = await platform.sql`select sent_via, sent_at from mails where id = ${first}`;
  t.equal(row!['sent_via'], 'dev_mailbox');
  t.ok(row!['sent_at'], 'recorded delivered: not sent again');
});
