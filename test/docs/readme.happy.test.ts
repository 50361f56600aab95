import { readFileSync } from 'node:fs';
import t from 'tap';
import { PLATFORM_SERVICES } from '../../scripts/services.ts';
import { ROOT } from '../helpers/platform.ts';

// The configuration table (docs/OPERATIONS.md) is the operator's reference: every variable a service reads must be in
// it. The README is the newcomer's page: the two commands, and where to go next.
const readme = readFileSync(`${ROOT}README.md`, 'utf8');
const operations = readFileSync(`${ROOT}docs/OPERATIONS.md`, 'utf8');
for (const { name: service, env } of PLATFORM_SERVICES) {
  t.test(`docs/OPERATIONS.md documents every ${service} variable`, async (t) => {
    for (const name of Object.keys(env.properties)) {
      // A row may name several variables of one service in its first cell.
      t.match(operations, new RegExp(`^\\| [^|]*\`${name}\`[^|]*\\|`, 'm'), `${name} is in the configuration table`);
    }
  });
}

t.test('README gives the two commands, and stays a page a newcomer reads through', async (t) => {
  t.match(readme, 'npm ci && npm start');
  t.match(readme, 'npm test');
  t.ok(readme.split('\n').length < 200, 'under 200 lines: the rest belongs in docs/');
});
