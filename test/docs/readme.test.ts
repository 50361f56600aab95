import { readFileSync } from 'node:fs';
import t from 'tap';
import { AffiliatesEnv } from '@platform/affiliates/config';
import { CommissionsEnv } from '@platform/commissions/config';
import { DispatcherEnv } from '@platform/dispatcher/config';
import { EventsEnv } from '@platform/events/config';
import { GatewayEnv } from '@platform/gateway/config';
import { ROOT } from '../helpers/platform.ts';

// The README's configuration table is the operator's reference: every variable a service reads must be in it.
const readme = readFileSync(`${ROOT}README.md`, 'utf8');
const schemas = {
  gateway: GatewayEnv,
  affiliates: AffiliatesEnv,
  commissions: CommissionsEnv,
  events: EventsEnv,
  dispatcher: DispatcherEnv,
};

for (const [service, schema] of Object.entries(schemas)) {
  t.test(`README documents every ${service} variable`, async (t) => {
    for (const name of Object.keys(schema.properties)) {
      t.match(readme, new RegExp(`^\\| \`${name}\` \\|`, 'm'), `${name} is in the configuration table`);
    }
  });
}

t.test('README gives the two commands', async (t) => {
  t.match(readme, 'npm ci && npm start');
  t.match(readme, 'npm test');
});
