import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import t from 'tap';
import { streamConfigs } from '@platform/shared/catalogue';
import { connectNats, ensureStreams } from '@platform/shared/nats';
import { startNatsServer } from '../helpers/nats-server.ts';

/**
 * nats-server removes an account's store folder when the account's last stream is deleted, so a stream created at
 * that moment (a service starting as another's streams go) fails with "could not create storage directory". A
 * start takes a store folder that cannot be made as passing, like a cluster's election. That race cannot be timed
 * from outside; here the folder cannot be made for a moment (a file sits where it goes), and the streams are made
 * once it can.
 */
t.test('a stream the server cannot store for a moment is created when it can', async (t) => {
  const server = await startNatsServer(t);
  const nc = await connectNats(server.url, 'test');
  t.teardown(() => nc.close());
  const streams = join(server.storeDir, 'jetstream', '$G', 'streams');
  mkdirSync(join(streams, '..'), { recursive: true });
  writeFileSync(streams, '');
  setTimeout(() => rmSync(streams), 600);
  await ensureStreams(nc, 'tstore');
  const jsm = await jetstreamManager(nc);
  const names: string[] = [];
  for await (const s of jsm.streams.list()) names.push(s.config.name);
  t.strictSame(
    names.sort(),
    streamConfigs('tstore', 1)
      .map((c) => c.name)
      .sort(),
    'every stream of the catalogue',
  );
});
