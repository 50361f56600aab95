import t from 'tap';
import { Type } from '@sinclair/typebox';
import { compileValidator } from '@platform/shared/validation';

/**
 * A schema with an `$id` can reach the validator twice: on its own (PUT payout_details) and as a copy inside another
 * (an onboarding submission holds the payout details; TypeBox copies what it composes). ajv refuses a second schema
 * under an `$id` it holds, so once the larger one was compiled first, every request of the smaller one in that
 * process answered INTERNAL. The larger one is compiled first here, as a service's first request could.
 */
t.test('a schema with an $id validates after a schema holding a copy of it was compiled', async (t) => {
  const details = Type.Object({ email: Type.String({ format: 'email' }) }, { $id: 'ValidationDetails' });
  const submission = Type.Object({ details, note: Type.String() });
  for (const location of ['body', 'query'] as const) {
    const whole = compileValidator<unknown>(submission, location);
    t.ok(whole({ details: { email: 'a@example.com' }, note: 'n' }), `${location}: the larger schema`);
    const alone = compileValidator<{ email: string }>(details, location);
    t.same(alone({ email: 'b@example.com' }), { email: 'b@example.com' }, `${location}: then the one inside it`);
    t.throws(() => alone({ email: 'not an address' }), { code: 'INVALID_INPUT' }, `${location}: which still refuses`);
    const again = compileValidator<{ email: string }>(details, location);
    t.same(again({ email: 'c@example.com' }), { email: 'c@example.com' }, `${location}: built twice`);
  }
});

t.test('two different schemas under one $id are still refused', async (t) => {
  const one = Type.Object({ a: Type.String() }, { $id: 'ValidationClash' });
  const other = Type.Object({ b: Type.Integer() }, { $id: 'ValidationClash' });
  compileValidator(one, 'body')({ a: 'x' });
  t.throws(() => compileValidator(other, 'body')({ b: 1 }), /already exists/);
});
