import t from 'tap';
import { createDashboardUser, sessionRequest, signInHttp, startDashboardPlatform } from '../helpers/dashboard.ts';

/**
 * A user's own account: changing the password needs the current one (a wrong one counts like a failed sign-in) and
 * ends every other session of theirs; two changes at once change it once; signing out everywhere ends every session.
 */
const { platform } = await startDashboardPlatform(t);
const base = platform.baseUrl;
const NEW = 'a brand new password';

async function user() {
  const merchant = await platform.merchant({ plan: 'growth' });
  const email = `user-${merchant.id}@example.com`;
  await createDashboardUser(platform.sql, merchant.id, email);
  return { merchant, email };
}
const alive = async (s: Awaited<ReturnType<typeof signInHttp>>) =>
  (await sessionRequest(base, s, 'GET', '/dashboard/api/session')).body.session !== null;

t.test('a password change ends the other sessions, keeps this one, and is logged', async (t) => {
  const { email } = await user();
  const here = await signInHttp(base, email);
  const elsewhere = await signInHttp(base, email);
  const changed = await sessionRequest(base, here, 'POST', '/dashboard/api/account/password', {
    current_password: 'correct horse battery',
    new_password: NEW,
  });
  t.equal(changed.status, 204);
  t.ok(await alive(here), 'this session goes on');
  t.notOk(await alive(elsewhere), 'the other one ended');
  t.equal((await signInHttp(base, email)).status, 401, 'the old password no longer signs in');
  t.equal((await signInHttp(base, email, NEW)).status, 201, 'the new one does');
  const log = await sessionRequest(base, here, 'GET', '/dashboard/api/audit');
  t.equal(log.body.data[0].action, 'account.password_changed');
  t.equal(log.body.data[0].actor, email);
});

t.test('a wrong current password is refused and counted; a short new one is 400', async (t) => {
  const { email } = await user();
  const s = await signInHttp(base, email);
  const wrong = await sessionRequest(base, s, 'POST', '/dashboard/api/account/password', {
    current_password: 'not the password',
    new_password: NEW,
  });
  t.equal(wrong.status, 403);
  t.equal(wrong.body.error.code, 'FORBIDDEN');
  const short = await sessionRequest(base, s, 'POST', '/dashboard/api/account/password', {
    current_password: 'correct horse battery',
    new_password: 'short',
  });
  t.equal(short.status, 400);
  t.match(short.body.error.details, [{ path: 'new_password' }]);
  // Four more wrong ones reach the limit of five per account and address: then even the right one waits.
  for (let i = 0; i < 4; i++)
    await sessionRequest(base, s, 'POST', '/dashboard/api/account/password', {
      current_password: `wrong ${i}`,
      new_password: NEW,
    });
  const limited = await sessionRequest(base, s, 'POST', '/dashboard/api/account/password', {
    current_password: 'correct horse battery',
    new_password: NEW,
  });
  t.equal(limited.status, 429);
  t.ok(limited.headers.get('retry-after'));
  t.equal((await signInHttp(base, email)).status, 429, 'the guesses count against sign-in too');
});

t.test('two password changes at once: one wins, the other is refused', async (t) => {
  const { email } = await user();
  const a = await signInHttp(base, email);
  const b = await signInHttp(base, email);
  const answers = await Promise.all(
    [a, b].map((s, i) =>
      sessionRequest(base, s, 'POST', '/dashboard/api/account/password', {
        current_password: 'correct horse battery',
        new_password: `${NEW} ${i}`,
      }),
    ),
  );
  const statuses = answers.map((r) => r.status).sort();
  // The loser finds the hash replaced (409), the old password no longer right (403), or its session ended (401).
  t.equal(statuses[0], 204, 'one change');
  t.ok([401, 403, 409].includes(statuses[1]!), `the other refused: ${statuses[1]}`);
  const winner = answers.findIndex((r) => r.status === 204);
  t.equal((await signInHttp(base, email, `${NEW} ${winner}`)).status, 201, 'the winner’s password is in force');
});

t.test('signing out everywhere ends every session, this one included', async (t) => {
  const { email } = await user();
  const here = await signInHttp(base, email);
  const elsewhere = await signInHttp(base, email);
  const res = await sessionRequest(base, here, 'DELETE', '/dashboard/api/account/sessions');
  t.equal(res.status, 204);
  t.match(res.headers.get('set-cookie'), /dash_session=;/, 'the cookie is cleared');
  t.notOk(await alive(here));
  t.notOk(await alive(elsewhere));
  t.equal((await sessionRequest(base, here, 'GET', '/api/v1/affiliates')).status, 401);
});

t.test('another user’s sessions are untouched', async (t) => {
  const { merchant, email } = await user();
  const colleagueEmail = `colleague-${merchant.id}@example.com`;
  await createDashboardUser(platform.sql, merchant.id, colleagueEmail);
  const colleague = await signInHttp(base, colleagueEmail);
  const s = await signInHttp(base, email);
  await sessionRequest(base, s, 'DELETE', '/dashboard/api/account/sessions');
  t.ok(await alive(colleague), 'a colleague stays signed in');
});
