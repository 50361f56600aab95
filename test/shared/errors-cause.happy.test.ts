import t from 'tap';
import { ApiError, invalidInput } from '@platform/shared/errors';
import { ConfigError } from '@platform/shared/config';
import { createLogger } from '@platform/shared/log';
import { invalidRequest } from '@platform/shared/payments/errors';
import { createAddressPolicy } from '../../services/dispatcher/src/domain/addresses.ts';
import { resolveAllowed } from '../../services/dispatcher/src/ssrf.ts';

// An error thrown in place of another keeps it as its cause, and the log line of the outer one shows the whole
// chain: "conflict" alone says nothing of the unique violation (or the DNS failure) beneath it.

t.test('each of our error classes and helpers takes { cause }', async (t) => {
  const root = new Error('duplicate key value violates unique constraint');
  t.equal(new ApiError('CONFLICT', 'taken', undefined, { cause: root }).cause, root);
  t.equal(invalidInput('url', 'is refused', { cause: root }).cause, root);
  t.equal(new ConfigError('X', 'is wrong', { cause: root }).cause, root);
  t.equal(invalidRequest('insufficient funds', { code: 'balance_insufficient', cause: root }).cause, root);
  t.equal(invalidRequest('no cause').cause, undefined, 'none given, none made up');
});

t.test('a refusal that wraps a failure carries it', async (t) => {
  const policy = createAddressPolicy({ appEnv: 'test' });
  const dnsFailure = Object.assign(new Error('getaddrinfo ENOTFOUND hooks.invalid'), { code: 'ENOTFOUND' });
  const refused = await resolveAllowed('hooks.invalid', policy, () => Promise.reject(dnsFailure)).then(
    () => null,
    (err: unknown) => err as Error,
  );
  t.match(refused, { name: 'RefusedAddressError', message: 'hooks.invalid could not be resolved' });
  t.equal(refused?.cause, dnsFailure);
});

t.test('the log line of a wrapped error prints the cause chain', async (t) => {
  const lines: string[] = [];
  const log = createLogger({ service: 'test' }, 'info', (line) => lines.push(line));
  const root = Object.assign(new Error('connection reset'), { parameters: ['secret@example.com'] });
  const middle = new ConfigError('DATABASE_URL', 'cannot be reached', { cause: root });
  log.error('startup failed', { err: new ApiError('UNAVAILABLE', 'try again', undefined, { cause: middle }) });
  const logged = JSON.parse(lines[0]!);
  t.match(logged.err, {
    name: 'ApiError',
    message: 'try again',
    cause: {
      name: 'ConfigError',
      message: 'configuration: DATABASE_URL cannot be reached',
      cause: { name: 'Error', message: 'connection reset' },
    },
  });
  t.match(logged.err.cause.cause.stack, /connection reset/);
  t.notMatch(lines[0], /secret@example\.com/, 'a cause is printed as name, message and stack only');
});
