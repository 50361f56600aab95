import t from 'tap';
import * as catalogue from '@platform/shared/catalogue';
import { NATS_ACCESS, NATS_CLIENTS, natsPermissions } from '@platform/shared/nats-access';
import { PLATFORM_SERVICES } from '../../scripts/services.ts';

/**
 * The access table (shared/src/nats-access.ts) stays whole with the catalogue: every process the platform runs has a
 * user, every durable consumer of the catalogue is pulled by exactly one process, every service answers its own
 * requests only, and the gateway is denied every service-to-service operation.
 */
const prefix = 'aff';

t.test('every process of the platform, and only those, has a NATS user', async (t) => {
  t.same([...NATS_CLIENTS].sort(), PLATFORM_SERVICES.map((s) => s.name).sort());
});

t.test("every durable consumer of the catalogue is one process's", async (t) => {
  const consumers = Object.values(catalogue).filter(
    (value): value is catalogue.DurableConsumerEntry =>
      typeof value === 'object' && value !== null && 'durable_name' in value,
  );
  t.ok(consumers.length >= 3);
  for (const consumer of consumers) {
    const owners = NATS_CLIENTS.filter((client) => NATS_ACCESS[client].consumes.includes(consumer));
    t.equal(owners.length, 1, `${consumer.durable_name}: ${owners.join(', ')}`);
  }
});

t.test('a service subscribes to its own requests only; the gateway to none', async (t) => {
  for (const service of catalogue.SERVICES) {
    const own = natsPermissions(service, prefix).subscribe.allow.filter((s) => s.startsWith(`${prefix}.rpc.`));
    t.same(own, [`${prefix}.rpc.${service}.*`], service);
  }
  t.same(natsPermissions('gateway', prefix).subscribe.allow, ['_INBOX.aff-gateway.>']);
});

t.test('the gateway is denied every service-to-service operation, and only those', async (t) => {
  const denied = natsPermissions('gateway', prefix).publish.deny ?? [];
  t.same(
    denied.sort(),
    Object.values(catalogue.PLATFORM_PAYOUT_SUBJECTS)
      .map((subject) => subject(prefix))
      .sort(),
  );
  for (const client of NATS_CLIENTS.filter((c) => c !== 'gateway'))
    t.notOk(natsPermissions(client, prefix).publish.deny, `${client} needs no deny list`);
});
