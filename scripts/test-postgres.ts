import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';

/**
 * The test suite's own Postgres: a cluster made for one `npm test` run from the machine's Postgres binaries (Debian's
 * packages, the newest major version installed), in memory where the machine has room, removed when the run ends.
 *
 * Every test file copies a database from the template (about a thousand files) and drops it at the end. On the
 * machine's server that cost most of a second of Postgres's CPU a file, most of what Postgres spent in a run, and it
 * grew as the run went on: ext4's inode allocator passes over every inode freed in the last minutes, and the run
 * frees them by the hundred thousand. In memory (tmpfs), without fsync or full-page images and with the least WAL, a
 * copy and a drop take tens of milliseconds. Nothing of a run has to outlive it; what the suite checks
 * (transactions, locks, constraints, plans, lost connections) is the same.
 */
// synchronous_commit stays on, as on a real server: the suite checks that what must be durable asks for it.
const SETTINGS = {
  fsync: 'off',
  full_page_writes: 'off',
  wal_level: 'minimal',
  max_wal_senders: '0',
  // Three test processes at a time, each with a few stacks' pools: more than the default 100.
  max_connections: '300',
  listen_addresses: '127.0.0.1',
  // The WAL lives in memory too: checkpoints keep it small.
  max_wal_size: '512MB',
};
/** tmpfs, when mounted here with this much room; else the operating system's temporary folder. */
const IN_MEMORY = { dir: '/dev/shm', room: 2 * 1024 ** 3 };
const FOLDER_PREFIX = 'platform-test-postgres-';
/** Where Debian and Ubuntu put each major version's binaries. */
const DEBIAN_BINARIES = '/usr/lib/postgresql';
/** Postgres refuses to run as root: there it runs as this user (the one the Debian packages make). */
const SERVICE_USER = 'postgres';

/** The newest major version's binary folder holding initdb, pg_ctl and postgres; null when there is none. */
function binaries(): string | null {
  if (!existsSync(DEBIAN_BINARIES)) return null;
  const versions = readdirSync(DEBIAN_BINARIES)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = join(DEBIAN_BINARIES, version, 'bin');
    if (['initdb', 'pg_ctl', 'postgres'].every((tool) => existsSync(join(bin, tool)))) return bin;
  }
  return null;
}

/** Where the run's cluster goes: in memory when there is room, else on disk. */
function parentFolder(): string {
  try {
    const fs = statfsSync(IN_MEMORY.dir);
    if (fs.bavail * fs.bsize >= IN_MEMORY.room) return IN_MEMORY.dir;
  } catch {
    // No such folder: not Linux, or a container without it.
  }
  return tmpdir();
}

/** The id of the server a data folder's postmaster.pid names, while it is alive; null otherwise. */
function livePostmaster(data: string): number | null {
  try {
    const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

/** Removes what runs killed before they could stop their cluster left in `parent`: folders whose server is gone. */
function removeLeftovers(parent: string): void {
  for (const name of readdirSync(parent).filter((n) => n.startsWith(FOLDER_PREFIX))) {
    const dir = join(parent, name);
    if (livePostmaster(join(dir, 'data')) === null) rmSync(dir, { recursive: true, force: true });
  }
}

/** The uid and gid of `user`; null when it does not exist. */
function account(user: string): { uid: number; gid: number } | null {
  const id = (flag: string) => spawnSync('id', [flag, user], { encoding: 'utf8' });
  const [uid, gid] = [id('-u'), id('-g')];
  if (uid.status !== 0 || gid.status !== 0) return null;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/**
 * Starts the run's cluster on `port` and answers its admin URL and how to stop it (at once, and its folder removed);
 * null when this machine has no Postgres binaries to make one with (or, as root, no user to run them as), in which
 * case the suite uses the server it finds.
 */
export async function startTestPostgres(
  port: number,
): Promise<{ url: string; dir: string; stop: () => Promise<void> } | null> {
  const bin = binaries();
  if (!bin) return null;
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? account(SERVICE_USER) : null;
  if (asRoot && !owner) return null;
  const run = (tool: string, args: string[]) => {
    const command = asRoot
      ? ['runuser', '-u', SERVICE_USER, '--', join(bin, tool), ...args]
      : [join(bin, tool), ...args];
    const result = spawnSync(command[0]!, command.slice(1), { encoding: 'utf8' });
    if (result.status !== 0)
      throw new Error(`${tool} failed (${result.status}): ${result.stderr || result.stdout}`.trim(), {
        cause: result.error,
      });
  };
  const parent = parentFolder();
  removeLeftovers(parent);
  const dir = mkdtempSync(join(parent, FOLDER_PREFIX));
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  // Any local user may reach 127.0.0.1: a password of the run's own keeps them out of a superuser's session (which
  // runs programs as the server's user); the socket folder is that user's alone.
  const password = randomBytes(18).toString('hex');
  /** Stops the server at once (it keeps nothing) and removes its folder; a server already gone is no error. */
  const removeCluster = () => {
    try {
      if (livePostmaster(data) !== null) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } catch {
      // It would not stop: it is killed, so that no server runs on a folder removed under it.
      const pid = livePostmaster(data);
      if (pid !== null) process.kill(pid, 'SIGKILL');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    // Until the password is set below, no one can sign in over TCP: a user without one fails md5.
    run('initdb', [
      ...['-D', data, '-U', 'postgres', '--auth-local', 'trust', '--auth-host', 'md5'],
      ...['--no-sync', '--no-instructions'],
    ]);
    const options = Object.entries(SETTINGS)
      .map(([name, value]) => `-c ${name}=${value}`)
      .concat([`-p ${port}`, `-k '${dir}'`]);
    run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', options.join(' '), '-w', '-t', '60', 'start']);
    // Stored as md5, so that a connection's sign-in costs a hash, not SCRAM's thousands (a run makes thousands).
    const local = postgres({ path: join(dir, `.s.PGSQL.${port}`), user: 'postgres', database: 'postgres', max: 1 });
    try {
      await local.begin(async (tx) => {
        await tx`set local password_encryption = 'md5'`;
        await tx.unsafe(`alter user postgres password '${password}'`);
      });
    } finally {
      await local.end({ timeout: 1 });
    }
  } catch (err) {
    removeCluster();
    throw err;
  }
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    dir,
    // Once: a run stopped by a signal stops it then, and again at its end.
    // A failure rejects (the executor's throw), for the caller's catch, rather than throwing past it.
    stop: () =>
      new Promise<void>((resolve) => {
        if (existsSync(dir)) removeCluster();
        resolve();
      }),
  };
}
