import { readFileSync } from 'node:fs';
import t from 'tap';
import { ROOT } from '../helpers/platform.ts';

// The project runs on Node 24 LTS: the `node` package puts its binary first on npm's PATH, so `npm test` and
// `npm start` run on it even where the machine's own node is older.
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
  allowScripts: Record<string, boolean>;
};

t.test('the suite runs on Node 24', async (t) => {
  t.equal(process.versions.node.split('.')[0], '24', `the tests run on Node 24 (this is ${process.version})`);
});

t.test('package.json pins the runtime the tests use (test/deploy/image.happy.test.ts: and the image)', async (t) => {
  t.match(pkg.engines.node, /^>=24\./, 'engines asks for Node 24');
  t.match(pkg.devDependencies['node'], /^24\.\d+\.\d+$/, 'the node package is pinned to an exact 24.x');
  t.equal(pkg.devDependencies['node'], process.versions.node, 'the tests run on the pinned version');
  t.equal(pkg.allowScripts['node'], true, "the node package's install script is approved");
});
