import t from 'tap';
import { CommonConfig, loadConfig } from '@platform/shared/config';
import { natsCredentials } from '@platform/shared/nats';

/** NATS_USER and NATS_PASSWORD, NATS_TLS_CERT and NATS_TLS_KEY come in pairs: half a pair stops the process by name. */
const credentialsOf = (env: Record<string, string>) => natsCredentials(loadConfig(CommonConfig, env));

t.test('half a pair is refused, naming the variable missing', async (t) => {
  const cases: [Record<string, string>, string][] = [
    [{ NATS_USER: 'aff-gateway' }, 'NATS_PASSWORD'],
    [{ NATS_PASSWORD: 'secret' }, 'NATS_USER'],
    [{ NATS_TLS_CERT: '/certs/tls.crt' }, 'NATS_TLS_KEY'],
    [{ NATS_TLS_KEY: '/certs/tls.key' }, 'NATS_TLS_CERT'],
  ];
  for (const [env, variable] of cases) {
    t.throws(
      () => credentialsOf(env),
      { name: 'ConfigError', variable, message: new RegExp(`^configuration: ${variable} is required`) },
      variable,
    );
  }
});

t.test('the pairs become the client options; none given, none passed', async (t) => {
  t.same(credentialsOf({}), {});
  t.same(
    credentialsOf({
      NATS_USER: 'aff-gateway',
      NATS_PASSWORD: 'secret',
      NATS_TLS_CA: '/certs/ca.crt',
      NATS_TLS_CERT: '/certs/tls.crt',
      NATS_TLS_KEY: '/certs/tls.key',
    }),
    {
      user: 'aff-gateway',
      pass: 'secret',
      tls: { caFile: '/certs/ca.crt', certFile: '/certs/tls.crt', keyFile: '/certs/tls.key' },
    },
  );
  t.same(credentialsOf({ NATS_TLS_CA: '/certs/ca.crt' }), { tls: { caFile: '/certs/ca.crt' } });
});

t.test('a user name that is not one subject token is refused: its replies come to _INBOX.<user>', async (t) => {
  for (const user of ['aff.gateway', 'aff gateway', 'aff-*', 'x'.repeat(65)])
    t.throws(() => loadConfig(CommonConfig, { NATS_USER: user, NATS_PASSWORD: 'secret' }), {
      name: 'ConfigError',
      variable: 'NATS_USER',
    });
});
