import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path.js';

/**
 * The reference's browser files: Swagger UI's bundle and stylesheet from the swagger-ui-dist package (in
 * node_modules, also in the container image: this module's import of the package puts it there), and the page's own
 * script. Each is served under a name carrying a hash of its content, so a browser may keep it for a year: a new
 * version has a new name.
 */
export interface Asset {
  /** The name it is served under, /docs/assets/{name}. */
  name: string;
  contentType: string;
  body: Buffer;
  /** The body gzipped, made on the first request that accepts it (the bundle shrinks to about a third). */
  gzipped: () => Promise<Buffer>;
}

/**
 * The reference page's one script: the page's policy runs no inline script, so the options live here. Swagger UI
 * renders the document named by the mount point's data-document, read only: no request is sent from the page (no
 * "Try it out"), so the Authorize buttons, which would only invite pasting a secret key into it, are left out; and
 * no validator badge, which would send the document's URL to a third party.
 */
const PAGE_SCRIPT = `'use strict';
(() => {
  const mount = document.getElementById('reference');
  const nothing = () => () => null;
  const hideAuthorize = () => ({ wrapComponents: { authorizeBtn: nothing, authorizeOperationBtn: nothing } });
  window.SwaggerUIBundle({
    url: mount.dataset.document,
    domNode: mount,
    deepLinking: true,
    filter: true,
    validatorUrl: null,
    supportedSubmitMethods: [],
    plugins: [hideAuthorize],
  });
})();
`;

const gzipAsync = promisify(gzip);

function asset(base: string, extension: string, contentType: string, body: Buffer): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
  let compressed: Promise<Buffer> | undefined;
  return {
    name: `${base}.${hash}.${extension}`,
    contentType,
    body,
    gzipped: () => (compressed ??= gzipAsync(body)),
  };
}

export interface ReferenceAssets {
  bundle: Asset;
  stylesheet: Asset;
  script: Asset;
  byName: Map<string, Asset>;
}

let loaded: ReferenceAssets | undefined;

/** Read once per process, at the first gateway's start: every gateway in it serves the same bytes. */
export function referenceAssets(): ReferenceAssets {
  if (loaded) return loaded;
  const dir = getAbsoluteFSPath();
  const javascript = 'text/javascript; charset=utf-8';
  const bundle = asset('swagger-ui-bundle', 'js', javascript, readFileSync(join(dir, 'swagger-ui-bundle.js')));
  const stylesheet = asset('swagger-ui', 'css', 'text/css; charset=utf-8', readFileSync(join(dir, 'swagger-ui.css')));
  const script = asset('reference', 'js', javascript, Buffer.from(PAGE_SCRIPT));
  loaded = { bundle, stylesheet, script, byName: new Map([bundle, stylesheet, script].map((a) => [a.name, a])) };
  return loaded;
}
