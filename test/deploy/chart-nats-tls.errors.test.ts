import t, { type Test } from 'tap';
import { templateChart } from '../helpers/helm.ts';

/**
 * TLS half-configured fails the install with the value to set, rather than render servers or services that cannot
 * connect: the bundled NATS on TLS without its Secret, or services told to use TLS towards a bundled NATS without it.
 */
t.setTimeout(60_000);
const base = { 'secrets.databaseUrl': 'postgres://affiliate@db:5432/affiliate', 'nats.enabled': 'true' };

const fails = async (t: Test, set: Record<string, string>, message: RegExp) => {
  const result = await templateChart(t, { withNats: true, set: { ...base, ...set } });
  t.not(result.code, 0, 'helm template fails');
  t.match(result.stderr, message);
  t.equal(result.stdout, '', 'and renders nothing');
};

t.test('the bundled NATS on TLS without the Secret of its certificate', async (t) => {
  await fails(t, { 'nats.config.nats.tls.enabled': 'true' }, /nats\.config\.nats\.tls\.secretName is required/);
});

t.test('client TLS towards a bundled NATS that has none', async (t) => {
  await fails(
    t,
    { 'natsTls.enabled': 'true', 'natsTls.secretName': 'nats-client-tls' },
    /natsTls\.enabled with the bundled NATS: turn TLS on in its servers too/,
  );
});

t.test('client TLS without its Secret', async (t) => {
  await fails(
    t,
    {
      'nats.config.nats.tls.enabled': 'true',
      'nats.config.nats.tls.secretName': 'nats-server-tls',
      'natsTls.enabled': 'true',
    },
    /natsTls\.secretName is required when natsTls\.enabled/,
  );
});
