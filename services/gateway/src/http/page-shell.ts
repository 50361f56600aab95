import { randomBytes } from 'node:crypto';
import type { Response } from 'express';

/**
 * The one shell of the gateway's server-rendered pages (the affiliates' onboarding page, /onboarding/{token}, and
 * the hosted onboarding page of account links, /connect/onboarding/{token}). The pages run no script; their only
 * inline content, the stylesheet, carries a nonce made afresh for each answer, so the policy needs no
 * 'unsafe-inline' and nothing injected into a page could style or script it. The answers are never cached: each
 * page is reached through a single-use token.
 */
export interface Page {
  title: string;
  /** The page's own stylesheet, inlined under the answer's nonce. */
  style: string;
  /** The inside of <main>, already escaped. */
  body: string;
}

export const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The document around a page, its stylesheet under `nonce`. */
export function renderPage(page: Page, nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>${escapeHtml(page.title)}</title>
<style nonce="${nonce}">${page.style}</style>
</head>
<body><main>
${page.body}
</main></body>
</html>`;
}

/**
 * The policy of one answer: nothing but its own nonced stylesheet, the empty icon, and forms posting to the page
 * itself or to `formTargets` (origins a form's answer may redirect to). Scripts only from the gateway itself: these
 * pages have none.
 */
export function pagePolicy(nonce: string, formTargets: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'nonce-${nonce}'`,
    'img-src data:',
    `form-action 'self'${formTargets.map((o) => ` ${o}`).join('')}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Answers a page with its status, never cached, under a policy with a fresh nonce. */
export function sendPage(
  res: Response,
  status: number,
  page: Page,
  options: { formTargets?: readonly string[] } = {},
): void {
  const nonce = randomBytes(16).toString('base64');
  res.setHeader('Content-Security-Policy', pagePolicy(nonce, options.formTargets));
  res.setHeader('Cache-Control', 'no-store');
  res.status(status).type('text/html').send(renderPage(page, nonce));
}
