import t from 'tap';
import { openPage } from '../helpers/dashboard.ts';
import { startPlatform, type TestLike } from '../helpers/platform.ts';

/**
 * The API reference the gateway serves (services/gateway/src/surfaces/reference): /docs lists the surfaces,
 * /docs/{slug} renders a surface's OpenAPI document with Swagger UI, whose files come from the gateway itself. In
 * real Chromium: every operation of the document shown, under the page's Content-Security-Policy without a single
 * violation, and no request leaving the gateway.
 */
const platform = await startPlatform(t);
const base = platform.baseUrl;

const SURFACES = [
  { page: '/docs/api', document: '/api/v1/openapi', known: 'Create an affiliate, optionally under a parent' },
  { page: '/docs/payments', document: '/v1/openapi', known: 'Create a payment intent (confirm=true to pay at once)' },
];

const YEAR = 'public, max-age=31536000, immutable';

type Document = { openapi: string; paths: Record<string, Record<string, { summary?: string }>> };

async function documentAt(path: string): Promise<Document> {
  const res = await fetch(`${base}${path}`);
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  return (await res.json()) as Document;
}

const summaries = (doc: Document) =>
  Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((op) => (op.summary ? [op.summary] : [])));

/** The asset paths a reference page names (its stylesheet and scripts). */
const assetPaths = (html: string) => [...html.matchAll(/(?:href|src)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]!);

t.test('/docs lists each surface and its document; the pages link each other', async (t) => {
  const res = await fetch(`${base}/docs`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/html/);
  t.match(res.headers.get('content-security-policy'), /default-src 'none'/);
  const html = await res.text();
  for (const surface of SURFACES) {
    t.match(html, `href="${surface.page}"`, `links ${surface.page}`);
    t.match(html, `href="${surface.document}"`, `links ${surface.document}`);
    const doc = await documentAt(surface.document);
    t.match(doc.openapi, /^3\./, `${surface.document} is an OpenAPI document`);
    t.ok(summaries(doc).includes(surface.known), `${surface.document} has "${surface.known}"`);
    const page = await (await fetch(`${base}${surface.page}`)).text();
    for (const other of ['/docs', ...SURFACES.map((s) => s.page)])
      t.match(page, `href="${other}"`, `${surface.page} links ${other}`);
  }
});

t.test(
  "the renderer's files are served with a year's caching, gzipped when asked, by content-named paths",
  async (t) => {
    const html = await (await fetch(`${base}/docs/api`)).text();
    const assets = assetPaths(html);
    t.equal(assets.length, 3, 'a stylesheet and two scripts');
    for (const path of assets) {
      const plain = await fetch(`${base}${path}`, { headers: { 'accept-encoding': 'identity' } });
      t.equal(plain.status, 200, path);
      t.equal(plain.headers.get('cache-control'), YEAR, `${path}: cached for a year`);
      t.equal(plain.headers.get('vary'), 'Accept-Encoding', `${path}: varies by encoding`);
      t.equal(plain.headers.get('content-encoding'), null, `${path}: not compressed unless asked`);
      t.match(plain.headers.get('content-type'), path.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
      const body = Buffer.from(await plain.arrayBuffer());
      t.ok(body.length > 0, `${path}: not empty`);
      // fetch decompresses: the same bytes arrive gzipped.
      const gzipped = await fetch(`${base}${path}`, { headers: { 'accept-encoding': 'gzip' } });
      t.equal(gzipped.headers.get('content-encoding'), 'gzip', `${path}: gzipped when asked`);
      t.equal(gzipped.headers.get('cache-control'), YEAR);
      t.ok(Buffer.from(await gzipped.arrayBuffer()).equals(body), `${path}: the same content gzipped`);
    }
    t.ok(
      assets.some((p) => /\/swagger-ui-bundle\.[0-9a-f]{16}\.js$/.test(p)),
      "Swagger UI's bundle, named by its content",
    );
    const unhashed = await fetch(`${base}/docs/assets/swagger-ui-bundle.js`);
    t.equal(unhashed.status, 404, 'a name the gateway does not serve');
    await unhashed.text();
  },
);

async function openReference(t: TestLike, path: string) {
  const { page, consoleErrors: errors } = await openPage(t);
  // Swagger UI draws a large document in a few seconds, longer on a busy machine.
  page.setDefaultTimeout(45_000);
  // Every request the page makes: those to another host are recorded and never sent.
  const requested: string[] = [];
  const leftTheGateway: string[] = [];
  await page.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== base) {
      leftTheGateway.push(url.href);
      return route.abort();
    }
    requested.push(url.pathname);
    return route.continue();
  });
  // Installed through the DevTools protocol before the page's own scripts, so the page's policy does not stop it.
  await page.addInitScript(
    `document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':' + e.lineNumber));`,
  );
  const response = await page.goto(`${base}${path}`);
  return { page, response: response!, errors, requested, leftTheGateway };
}

for (const surface of SURFACES) {
  t.test(
    `${surface.page} renders ${surface.document} in Chromium, from the gateway alone, within its CSP`,
    async (t) => {
      const doc = await documentAt(surface.document);
      const { page, response, errors, requested, leftTheGateway } = await openReference(t, surface.page);
      t.equal(response.status(), 200);
      const policy = response.headers()['content-security-policy'];
      t.ok(policy, 'the page has a Content-Security-Policy');
      t.match(policy, /script-src 'self'(;|$)/, 'scripts only from the gateway');
      t.notMatch(
        policy,
        /unsafe-eval|unsafe-inline|https:|\*/,
        'no eval, nothing inline without a nonce, no other host',
      );

      await page.getByText(surface.known, { exact: true }).waitFor();
      const text = await page.locator('#reference').innerText();
      const missing = summaries(doc).filter((s) => !text.includes(s));
      t.same(missing, [], `every operation of ${surface.document} is listed`);

      // An operation opened: its parameters, request body and responses drawn from the schemas.
      await page.getByText(surface.known, { exact: true }).click();
      await page.locator('.opblock.is-open .responses-wrapper .response').first().waitFor();

      t.ok(requested.includes(surface.document), 'the document was read from its public URL');
      t.ok(
        requested.some((p) => p.startsWith('/docs/assets/swagger-ui-bundle.')),
        "Swagger UI's bundle came from the gateway",
      );
      t.same(leftTheGateway, [], 'no request left the gateway');
      t.same(errors, [], 'no console error, no CSP violation');
    },
  );
}
