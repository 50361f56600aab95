import t from 'tap';
import { runAdmin } from '../helpers/cli.ts';
import { createAffiliate, startWithEvents } from './setup.ts';

/** The operator CLI's coupon commands, run as operators run them: a process against the platform's database. */
const { platform } = await startWithEvents(t);
const merchant = await platform.merchant();
const other = await platform.merchant();
const jane = await createAffiliate(merchant.client, 'jane@example.com');
const theirs = await createAffiliate(other.client, 'zed@example.com');

const admin = (...args: string[]) => runAdmin(platform.databaseUrl, ...args);

t.test('coupon create, list and delete; the coupon attributes events at once', async (t) => {
  const created = await admin('coupon', 'create', merchant.id, '--affiliate', jane.id, '--code', 'Spring24');
  t.equal(created.code, 0, created.stderr);
  const coupon = JSON.parse(created.stdout);
  t.match(coupon, { id: /^cpn_[0-9a-z]{26}$/, code: 'Spring24', affiliate_id: jane.id });
  t.same(Object.keys(coupon).sort(), ['affiliate_id', 'code', 'created_at', 'id'], 'the API shape');

  const event = await merchant.client.post('/api/v1/events', {
    event_type: 'purchase',
    external_id: 'cli_1',
    coupon: 'SPRING24',
  });
  t.match(event.body, { affiliate_id: jane.id, attributed_by: 'coupon' });

  const duplicate = await admin('coupon', 'create', merchant.id, '--affiliate', jane.id, '--code', 'spring24');
  t.equal(duplicate.code, 2);
  t.equal(duplicate.stdout, '');
  t.match(duplicate.stderr, /already has a coupon spring24/);

  const foreign = await admin('coupon', 'create', merchant.id, '--affiliate', theirs.id, '--code', 'ZED');
  t.equal(foreign.code, 2);
  t.match(foreign.stderr, `no affiliate ${theirs.id} at merchant ${merchant.id}`);

  const listed = await admin('coupon', 'list', merchant.id, '--affiliate', jane.id);
  t.equal(listed.code, 0, listed.stderr);
  t.same(JSON.parse(listed.stdout), [coupon]);

  const wrongMerchant = await admin('coupon', 'delete', other.id, coupon.id);
  t.equal(wrongMerchant.code, 2);
  t.match(wrongMerchant.stderr, `no coupon ${coupon.id} at merchant ${other.id}`);
  const deleted = await admin('coupon', 'delete', merchant.id, coupon.id);
  t.equal(deleted.code, 0, deleted.stderr);
  t.same(JSON.parse(deleted.stdout), { id: coupon.id, deleted: true });
  const emptied = await admin('coupon', 'list', merchant.id);
  t.same(JSON.parse(emptied.stdout), []);
});
