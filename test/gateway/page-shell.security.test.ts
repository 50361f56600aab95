import t from 'tap';
import { pagePolicy, renderPage } from '@platform/gateway/http/page-shell';
import { startPayments } from '../payments/setup.ts';

// The one shell of the gateway's server-rendered pages (services/gateway/src/http/page-shell.ts): the only inline
// content, the stylesheet, runs under a nonce made afresh for each answer, so the policy needs no 'unsafe-inline'.
const { platform } = await startPayments(t);

t.test('the policy allows the nonced stylesheet and nothing inline', async (t) => {
  const policy = pagePolicy('abc', ['https://shop.example']);
  t.match(policy, "default-src 'none'");
  t.match(policy, "style-src 'nonce-abc'");
  t.match(policy, "form-action 'self' https://shop.example");
  t.match(policy, "base-uri 'none'");
  t.match(policy, "frame-ancestors 'none'");
  t.notMatch(policy, 'unsafe-inline');
  const html = renderPage({ title: 'A <b> title', style: 'p{}', body: '<p>hi</p>' }, 'abc');
  t.match(html, '<style nonce="abc">p{}</style>');
  t.match(html, '<title>A &lt;b&gt; title</title>', 'the title is escaped');
  t.match(html, '<main>\n<p>hi</p>\n</main>');
});

t.test('both onboarding pages answer under their own fresh nonce', async (t) => {
  for (const path of [`/onboarding/${'a'.repeat(43)}`, `/connect/onboarding/${'a'.repeat(43)}`]) {
    const nonces: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${platform.baseUrl}${path}`);
      t.equal(res.status, 404, path);
      t.equal(res.headers.get('cache-control'), 'no-store');
      const policy = res.headers.get('content-security-policy') ?? '';
      const nonce = /style-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(policy)?.[1];
      t.ok(nonce, `${path}: a nonce in the policy (${policy})`);
      t.notMatch(policy, 'unsafe-inline');
      t.match(await res.text(), `<style nonce="${nonce}">`, `${path}: the stylesheet carries it`);
      nonces.push(nonce!);
    }
    t.not(nonces[0], nonces[1], `${path}: a new nonce for each answer`);
  }
});
