import { spawnSync } from 'node:child_process';
import t from 'tap';
import { ConfigError } from '@platform/shared/config';
import { loadGatewayConfig } from '@platform/gateway/config';
import { trustProxySetting } from '@platform/gateway/http/trust-proxy';
import { ROOT } from '../helpers/platform.ts';

// TRUST_PROXY is a hop count or a list of proxy addresses, checked at start: `true` (every hop, so the client's own
// leftmost X-Forwarded-For) and anything that is not an address stop the gateway, naming the variable.
const load = (value: string) => loadGatewayConfig({ TRUST_PROXY: value });

t.test('accepted: none, a hop count, addresses and CIDRs, express’s names', async (t) => {
  t.equal(trustProxySetting(load('false').TRUST_PROXY), 0, 'false trusts nothing');
  t.equal(trustProxySetting(load('').TRUST_PROXY), 0, 'unset is false');
  t.equal(trustProxySetting(load('0').TRUST_PROXY), 0);
  t.equal(trustProxySetting(load('1').TRUST_PROXY), 1, 'one hop');
  t.equal(trustProxySetting(load('2').TRUST_PROXY), 2);
  t.same(trustProxySetting(load('10.0.0.0/8, 192.168.1.7,fd00::/8, ::1, loopback').TRUST_PROXY), [
    '10.0.0.0/8',
    '192.168.1.7',
    'fd00::/8',
    '::1',
    'loopback',
  ]);
});

t.test('refused, naming TRUST_PROXY: true, names that are not addresses, prefixes out of range', async (t) => {
  for (const value of [
    'true',
    'yes',
    '10.0.0.0/33',
    '::1/129',
    '10.0.0.256',
    '10.0.0.1,',
    '10.0.0.1/8/8',
    'abc',
    '1,2',
  ]) {
    t.throws(() => load(value), ConfigError, value);
    try {
      load(value);
    } catch (err) {
      t.equal((err as ConfigError).variable, 'TRUST_PROXY', `${value}: the variable is named`);
    }
  }
});

t.test('a bad TRUST_PROXY stops the gateway at start with exit code 78 and the variable’s name', async (t) => {
  const run = spawnSync(process.execPath, [`${ROOT}services/gateway/src/main.ts`], {
    env: { ...process.env, TRUST_PROXY: 'true', LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  t.equal(run.status, 78);
  t.match(run.stdout + run.stderr, 'TRUST_PROXY');
});
