import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Request, type Response } from 'express';
import { sendError } from './http-errors.ts';

/**
 * Where the dashboard's built assets are: DASHBOARD_DIR when set; else `../dashboard` beside the gateway's bundle
 * (dist/gateway/main.js → dist/dashboard, also in the container image); else the build made from the sources by
 * `npm ci` / `npm start` / `npm test` (services/dashboard/dist). The gateway only reads them.
 */
export function findDashboardDir(configured?: string): string | null {
  const candidates = configured
    ? [configured]
    : [
        fileURLToPath(new URL('../dashboard/', import.meta.url)),
        fileURLToPath(new URL('../../../dashboard/dist/', import.meta.url)),
      ];
  return candidates.find((dir) => existsSync(join(dir, 'index.html'))) ?? null;
}

/**
 * /dashboard: hashed assets under /dashboard/assets/ are cached for a year (a new build has new names); every other
 * path under /dashboard is a page of the app and gets index.html, never cached, so a deploy is seen at once.
 */
export function dashboardAssets(dir: string | null): express.Router {
  const router = express.Router();
  if (!dir) {
    router.get(['/dashboard', '/dashboard/*path'], (_req: Request, res: Response) => {
      res.status(503).type('text/plain').send('The dashboard is not built: run npm run build (or npm ci) first.\n');
    });
    return router;
  }
  router.use(
    '/dashboard/assets',
    express.static(join(dir, 'assets'), { immutable: true, maxAge: '365d', index: false }),
  );
  router.use('/dashboard/assets', (_req: Request, res: Response) => sendError(res, 'NOT_FOUND', 'No such file'));
  const index = join(dir, 'index.html');
  router.get(['/dashboard', '/dashboard/*path'], (req: Request, res: Response, next) => {
    if (req.path.startsWith('/dashboard/api/')) return next();
    res.locals['route'] = 'dashboard.page';
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  return router;
}
