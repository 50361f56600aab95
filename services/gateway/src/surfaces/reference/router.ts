import { randomBytes } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import { sendError } from '../../http/http-errors.ts';
import { renderPage, sendPage } from '../../http/page-shell.ts';
import { referenceAssets } from './assets.ts';
import { indexPage, surfacePage } from './pages.ts';
import { SURFACES } from './surfaces.ts';

const YEAR_SECONDS = 365 * 24 * 60 * 60;

/**
 * The policy of a reference page: the shell's (http/page-shell.ts) and what Swagger UI needs of the gateway itself, of
 * nowhere else: its stylesheet (style-src 'self'), its icons (inline SVG: img-src data:) and the OpenAPI document it
 * fetches (connect-src 'self'). Its scripts are the gateway's files: none inline, no eval, no web font, no form.
 */
export function referencePolicy(nonce: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    'img-src data:',
    "connect-src 'self'",
    "form-action 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The API reference for merchants' developers, public like the documents it renders: GET /docs lists the
 * surfaces, GET /docs/{slug} renders one (surfaces.ts), GET /docs/assets/{name} serves Swagger UI's files from the
 * gateway itself, so the pages load nothing from another origin.
 */
export function createReferenceRouter(): express.Router {
  const assets = referenceAssets();
  const router = express.Router();

  router.get('/docs', (_req: Request, res: Response) => {
    res.locals['route'] = 'reference.index';
    sendPage(res, 200, indexPage());
  });

  for (const surface of SURFACES) {
    const page = surfacePage(surface, assets);
    router.get(`/docs/${surface.slug}`, (_req: Request, res: Response) => {
      res.locals['route'] = 'reference.surface';
      const nonce = randomBytes(16).toString('base64');
      res.setHeader('Content-Security-Policy', referencePolicy(nonce));
      // A deploy's new asset names are seen at the next visit.
      res.setHeader('Cache-Control', 'no-cache');
      res.status(200).type('text/html').send(renderPage(page, nonce));
    });
  }

  router.get('/docs/assets/:name', async (req: Request, res: Response) => {
    res.locals['route'] = 'reference.asset';
    const asset = assets.byName.get(req.params['name'] as string);
    if (!asset) return sendError(res, 'NOT_FOUND', 'No such file');
    res.setHeader('Cache-Control', `public, max-age=${YEAR_SECONDS}, immutable`);
    res.setHeader('Vary', 'Accept-Encoding');
    res.type(asset.contentType);
    if (req.acceptsEncodings('gzip') !== 'gzip') return void res.send(asset.body);
    res.setHeader('Content-Encoding', 'gzip');
    res.send(await asset.gzipped());
  });

  return router;
}
