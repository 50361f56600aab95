import { buildBundles } from './bundle.ts';

/** `npm run build`: the bundles of scripts/bundle.ts in dist/ (what `npm run bench` and the container image run). */
const out = new URL('../dist', import.meta.url).pathname;
const { entries } = await buildBundles(out);
process.stderr.write(
  `build: ${entries.map((s) => `dist/${s}/main.js`).join(', ')}; dist/migrations; dist/dashboard; dist/packages.json\n`,
);
