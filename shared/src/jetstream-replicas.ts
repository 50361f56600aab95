import type { NatsConnection } from '@nats-io/transport-node';
import type { TopologyConfig } from './config.ts';

/** The JETSTREAM_REPLICAS setting: a replica count, or `auto`. */
export type ReplicasSetting = TopologyConfig['JETSTREAM_REPLICAS'];

/** The replicas `auto` asks for on a cluster of this many servers or more; 1 below it. */
const AUTO_REPLICATED = 3;

/**
 * The servers of the cluster the connection is on, as the server last told the client: INFO's `connect_urls` is the
 * client address of every server the connected one has a route to, itself included, gossiped over the routes and
 * sent again (the client keeps `nc.info` current) whenever a server joins or leaves. It is the one count every
 * client may read: JetStream's account info carries no cluster size, and the server list ($SYS.REQ.SERVER.PING)
 * needs the system account. A cluster configured with `no_advertise` sends only the server's own address: there,
 * set JETSTREAM_REPLICAS explicitly.
 */
function advertisedServers(nc: NatsConnection): number {
  return Math.max(1, new Set(nc.info?.connect_urls ?? []).size);
}

/**
 * The num_replicas to give streams and durable consumers, asked afresh at each topology check. `auto` takes the
 * largest cluster seen since the connection was made: a server down for a restart or a rolling upgrade is still part
 * of the cluster, and a process started while routes were still forming, which saw fewer, asks for more once they
 * have formed (the check then scales up what it created with fewer).
 */
export function jetStreamReplicas(nc: NatsConnection, setting: ReplicasSetting): () => number {
  if (setting !== 'auto') {
    const fixed = Number(setting);
    return () => fixed;
  }
  let largest = 1;
  return () => {
    largest = Math.max(largest, advertisedServers(nc));
    return largest >= AUTO_REPLICATED ? AUTO_REPLICATED : 1;
  };
}
