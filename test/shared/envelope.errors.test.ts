import t from 'tap';
import { parseEnvelope, PoisonMessage } from '@platform/shared/envelope';
import { createLogger } from '@platform/shared/log';

// Both stream consumers (commissions, dispatcher) read an envelope this one way: what cannot be processed is a
// PoisonMessage naming what is wrong, never the content.
const bytes = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
const valid = {
  id: 'msg_01',
  type: 'affiliate.created',
  merchant_id: 'mer_1',
  created_at: '2026-11-25T12:00:00.000Z',
  data: { email: 'secret@example.com' },
};

t.test('a well-formed envelope of an expected type is answered as it is', async (t) => {
  t.same(parseEnvelope(bytes(valid), ['affiliate.created', 'affiliate.approved']), valid);
});

t.test('each defect is named, and the message never carries the content', async (t) => {
  const cases: [string, unknown, string][] = [
    ['not JSON', '{"id":', 'not JSON'],
    ['an array', [valid], 'type is not one this stream carries'],
    ['null', 'null', 'not an envelope'],
    ['another type', { ...valid, type: 'commission.created' }, 'type is not one this stream carries'],
    ['no merchant', { ...valid, merchant_id: undefined }, 'envelope lacks id, merchant_id or created_at'],
    ['a bad time', { ...valid, created_at: 'yesterday' }, 'created_at is not a timestamp'],
    ['data not an object', { ...valid, data: 'secret@example.com' }, 'data is not an object'],
  ];
  for (const [what, value, message] of cases) {
    t.throws(
      () => parseEnvelope(bytes(value), ['affiliate.created', 'affiliate.approved']),
      new PoisonMessage(message),
      what,
    );
  }
  t.throws(
    () => parseEnvelope(bytes({ ...valid, type: 'x' }), ['conversion.recorded']),
    new PoisonMessage('type is not conversion.recorded'),
  );
});

t.test('a logged error keeps its cause, and none of the fields drivers put parameters in', async (t) => {
  const lines: string[] = [];
  const log = createLogger({ service: 't' }, 'info', (line) => lines.push(line));
  const driverError = Object.assign(new Error('duplicate key'), { parameters: ['secret@example.com'] });
  log.error('failed', { err: new Error('could not record', { cause: driverError }) });
  const logged = JSON.parse(lines[0]!) as { err: { message: string; cause: { message: string } } };
  t.equal(logged.err.message, 'could not record');
  t.equal(logged.err.cause.message, 'duplicate key');
  t.notMatch(lines[0]!, 'secret@example.com');
});
