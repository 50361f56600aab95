import { readFileSync } from 'node:fs';
import t from 'tap';
import { GRANTS, PERMISSIONS, ROLES } from '@platform/gateway/http/accounts/permissions';
import { ROOT } from '../helpers/platform.ts';

// docs/DASHBOARD.md's table of roles is the one the gateway enforces (permissions.ts): a permission, a description
// or a grant changed on one side only fails here.
const doc = readFileSync(`${ROOT}docs/DASHBOARD.md`, 'utf8');

t.test('the roles table in docs/DASHBOARD.md is permissions.ts', async (t) => {
  const block = /<!-- roles:begin[^>]*-->\n([\s\S]*?)<!-- roles:end -->/.exec(doc);
  t.ok(block, 'the table is between its markers');
  const [header, , ...rows] = block![1]!.trim().split('\n');
  const cells = (line: string) =>
    line
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim());
  t.same(cells(header!), ['permission', 'what it allows', ...ROLES]);
  t.same(
    rows.map(cells),
    Object.entries(PERMISSIONS).map(([permission, what]) => [
      permission,
      what,
      ...ROLES.map((role) => (GRANTS[role].includes(permission as keyof typeof PERMISSIONS) ? '✓' : '')),
    ]),
  );
});
