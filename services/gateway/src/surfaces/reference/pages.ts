import { escapeHtml, type Page } from '../../http/page-shell.ts';
import type { ReferenceAssets } from './assets.ts';
import { SURFACES, type Surface } from './surfaces.ts';

/**
 * The reference's pages, in the gateway's page shell (http/page-shell.ts): /docs lists the surfaces, /docs/{slug}
 * renders one surface's OpenAPI document with Swagger UI.
 */

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #1c2330; }
  main { max-width: 72rem; margin: 0 auto; padding: 1rem 1.25rem 3rem; }
  nav.docs { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; padding: .5rem 0 1rem;
             border-bottom: 1px solid #d5d9e0; }
  nav.docs a { color: #1d4ed8; }
  nav.docs a[aria-current="page"] { color: inherit; font-weight: 600; text-decoration: none; }
  .surfaces { list-style: none; padding: 0; }
  .surfaces li { margin: 1.25rem 0; }
  .surfaces h2 { font-size: 1.2rem; margin: 0 0 .25rem; }
  .surfaces p { margin: .25rem 0; }
  code { font-size: .9em; }`;

/** The links between the reference's pages, the current one marked. */
function navigation(current: string): string {
  const links = [
    { href: '/docs', label: 'API reference' },
    ...SURFACES.map((s) => ({ href: `/docs/${s.slug}`, label: s.title })),
    { href: '/dashboard', label: 'Dashboard' },
  ];
  const items = links.map(
    (l) => `<a href="${l.href}"${l.href === current ? ' aria-current="page"' : ''}>${escapeHtml(l.label)}</a>`,
  );
  return `<nav class="docs" aria-label="API reference">${items.join('\n')}</nav>`;
}

export function indexPage(): Page {
  const surfaces = SURFACES.map(
    (s) => `<li>
<h2><a href="/docs/${s.slug}">${escapeHtml(s.title)}</a></h2>
<p>${escapeHtml(s.summary)}</p>
<p>OpenAPI document: <a href="${s.document}"><code>${escapeHtml(s.document)}</code></a></p>
</li>`,
  );
  return {
    title: 'API reference',
    style: STYLE,
    body: `${navigation('/docs')}
<h1>API reference</h1>
<p>Every operation, parameter, response and error of the platform's APIs, from the OpenAPI documents the gateway
serves (use them to generate a client).</p>
<ul class="surfaces">
${surfaces.join('\n')}
</ul>`,
  };
}

/**
 * One surface's reference: Swagger UI's stylesheet and scripts from the gateway (/docs/assets), rendering into the
 * mount point; until it has, and without script, the mount point links the document itself.
 */
export function surfacePage(surface: Surface, assets: ReferenceAssets): Page {
  const asset = (name: string) => `/docs/assets/${name}`;
  return {
    title: `${surface.title} reference`,
    style: STYLE,
    body: `${navigation(`/docs/${surface.slug}`)}
<link rel="stylesheet" href="${asset(assets.stylesheet.name)}">
<div id="reference" data-document="${surface.document}">
<h1>${escapeHtml(surface.title)}</h1>
<p>${escapeHtml(surface.summary)}</p>
<p>The reference is drawn by script. The OpenAPI document: <a href="${surface.document}"><code>${escapeHtml(surface.document)}</code></a></p>
</div>
<script src="${asset(assets.bundle.name)}"></script>
<script src="${asset(assets.script.name)}"></script>`,
  };
}
