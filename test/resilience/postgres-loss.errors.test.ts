import t from 'tap';
import { assertAnsweredAndRetry, assertProcessedOnce } from '../helpers/burst.ts';
import { postEvents, startFullStack } from '../helpers/full-stack.ts';
import { sleep } from '../helpers/platform.ts';
import { startNatsServer } from '../helpers/nats-server.ts';

// Postgres connections lost under load, with no service restarted: every service's backends terminated again and
// again during a burst. Requests that meet the lost database answer 503 UNAVAILABLE with Retry-After, never 500,
// and no process crashes (the driver's defects that crashed or stalled a service are fixed
// in scripts/patch-dependencies.ts); once the database is back, every event answered 201 (or 200/201 on a retry after
// a 503) gets exactly one level-0 commission and its webhook.
t.setTimeout(170_000);
const SERVICES = ['gateway', 'affiliates', 'events', 'events-attribution', 'commissions', 'dispatcher'];

const nats = await startNatsServer(t);
const stack = await startFullStack(t, {
  merchant: { plan: 'scale', rateLimit: 60_000 },
  natsUrl: nats.url,
});
const { sql } = stack.platform;

t.test(
  'backends terminated during a burst of 300 events: 503s while down, then everything processed once',
  async (t) => {
    let terminating = true;
    let terminated = 0;
    const killer = (async () => {
      while (terminating) {
        const rows = await sql<{ ok: boolean }[]>`
        select pg_terminate_backend(pid) as ok from pg_stat_activity
        where datname = current_database() and application_name in ${sql(SERVICES)}`.catch(() => []);
        terminated += rows.filter((r) => r.ok).length;
        await sleep(150);
      }
    })();
    const responses = await postEvents(stack.merchant.client, 'pg', 300, 20);
    terminating = false;
    await killer;
    t.ok(terminated > 0, `backends were terminated (${terminated})`);
    await assertAnsweredAndRetry(t, stack, responses, 'pg');
    await assertProcessedOnce(t, stack, 'pg', 300);
  },
);
