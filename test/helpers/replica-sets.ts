import type { JetStreamManager } from '@nats-io/jetstream';
import { eventually } from './platform.ts';

/** A stream or consumer of a JetStream cluster, as far as its replicas go. */
export interface ReplicaSet {
  name: string;
  /** num_replicas as configured. */
  replicas: number;
  /** The servers holding it: the leader and the other replicas. */
  peers: number;
  /** A leader, and every other replica caught up with it. */
  current: boolean;
}

const replicaSet = (
  name: string,
  replicas: number,
  cluster: { leader?: string; replicas?: { current: boolean }[] } | undefined,
): ReplicaSet => ({
  name,
  replicas,
  peers: (cluster?.leader ? 1 : 0) + (cluster?.replicas?.length ?? 0),
  current: Boolean(cluster?.leader) && (cluster?.replicas ?? []).every((r) => r.current),
});

/** The named streams and every consumer on them, as JetStream reports them now. */
async function replicaSets(jsm: JetStreamManager, streams: string[]): Promise<ReplicaSet[]> {
  const sets: ReplicaSet[] = [];
  for (const name of streams) {
    const info = await jsm.streams.info(name);
    sets.push(replicaSet(name, info.config.num_replicas, info.cluster));
    for await (const c of jsm.consumers.list(name))
      sets.push(replicaSet(`${name}/${c.name}`, c.config.num_replicas ?? 0, c.cluster));
  }
  return sets;
}

/**
 * Waits until the named streams and every consumer on them have `replicas` replicas, a leader and every replica
 * caught up; answers them. A wait that times out names what was still short of it.
 */
export async function allReplicated(
  jsm: JetStreamManager,
  streams: string[],
  what: string,
  { replicas = 3, timeoutMs = 30_000 } = {},
): Promise<ReplicaSet[]> {
  const whole = (s: ReplicaSet) => s.replicas === replicas && s.peers === replicas && s.current;
  let last = '';
  try {
    return await eventually(
      async () => {
        const sets = await replicaSets(jsm, streams).catch((err: unknown) => {
          last = (err as Error).message;
          return [];
        });
        if (sets.length) last = JSON.stringify(sets.filter((s) => !whole(s)));
        return sets.length > streams.length && sets.every(whole) ? sets : undefined;
      },
      timeoutMs,
      what,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last seen: ${last}`, { cause: err });
  }
}
