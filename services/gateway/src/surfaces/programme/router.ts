import express, { type Request, type Response } from 'express';
import { programmePageApi } from '@platform/shared/api/programme-page';
import type { Sql } from '@platform/shared/db';
import type { ErrorDetail } from '@platform/shared/errors';
import type { Logger } from '@platform/shared/log';
import type { GatewayConfig } from '../../config.ts';
import { forward } from '../../http/forward.ts';
import type { Requester } from '../../http/requester.ts';
import { toExpressPath } from '../../http/openapi/express-path.ts';
import { sendPage } from '../../http/page-shell.ts';
import { decodeJson } from '@platform/shared/nats';
import type { ApplicationReceived } from '@platform/shared/schemas/programme';
import { checkApplication, readFields, type Fields } from './form.ts';
import { messagePage, notFoundPage, programmePage, thanksPage } from './html.ts';
import { APPLY_LIMITS, createApplyLimiter } from './limits.ts';
import { findPublicProgramme } from './queries/programmes.ts';
import { openProgrammePage, submitProgrammePage } from './specs.ts';

const SLUG = /^[a-z0-9][a-z0-9-]{1,62}$/;
const FORM_LIMIT = '16kb';

/**
 * The public programme page, GET and POST /p/{slug} (docs/PORTAL.md): no key, no sign-in. The page is the gateway's
 * (it reads the programme and computes its terms); an application is the affiliates service's
 * (programmePageApi.applyToProgramme), which makes the affiliate by the API's own path. The answer to an
 * application is the same whether or not the address applied before. Abuse limits per client address and per
 * e-mail domain are counted in Postgres, like sign-up's (limits.ts): the address's before anything is made or
 * mailed, the domain's checked before and counted only when the service says the application made an affiliate.
 */
export function createProgrammePage(deps: {
  config: GatewayConfig;
  sql: Sql;
  log: Logger;
  requester: Requester;
  maxPayload: () => number;
  limits?: typeof APPLY_LIMITS;
}): express.Router {
  const { config, sql, log } = deps;
  const limiter = createApplyLimiter(sql, deps.limits ?? APPLY_LIMITS);
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: FORM_LIMIT, parameterLimit: 16 });

  const unavailable = (res: Response) => {
    res.setHeader('Retry-After', '1');
    sendPage(res, 503, messagePage('Try again', 'The service is temporarily unavailable. Try again in a moment.'));
  };

  router.get(toExpressPath(openProgrammePage.path), async (req: Request, res: Response) => {
    res.locals['route'] = 'programme.open';
    const slug = req.params['slug'] as string;
    const programme = SLUG.test(slug) ? await findPublicProgramme(sql, slug) : undefined;
    if (!programme) return sendPage(res, 404, notFoundPage());
    const ref = typeof req.query['ref'] === 'string' ? req.query['ref'].slice(0, 64) : '';
    sendPage(res, 200, programmePage(programme, slug, ref ? { ref } : {}));
  });

  router.post(toExpressPath(submitProgrammePage.path), form, async (req: Request, res: Response) => {
    res.locals['route'] = 'programme.apply';
    const slug = req.params['slug'] as string;
    const programme = SLUG.test(slug) ? await findPublicProgramme(sql, slug) : undefined;
    if (!programme) return sendPage(res, 404, notFoundPage());
    const fields: Fields = readFields(req.body);
    const refill = (errors: ErrorDetail[]) => sendPage(res, 400, programmePage(programme, slug, fields, errors));
    const checked = checkApplication(fields);
    if (!checked.ok) return refill(checked.errors);
    const email = checked.body.email;
    const ip = req.ip ?? 'unknown';
    const wait = await limiter.admit(programme.merchantId, email, ip);
    if (wait !== null) {
      res.setHeader('Retry-After', String(wait));
      log.info('application refused: over the limit', { merchant_id: programme.merchantId });
      return sendPage(
        res,
        429,
        messagePage('Too many applications', 'Too many applications have been sent from here. Try again later.'),
      );
    }
    const result = await forward(
      deps.requester,
      deps.maxPayload(),
      config.NATS_PREFIX,
      programmePageApi.applyToProgramme,
      {
        request_id: res.locals['requestId'] as string,
        merchant_id: programme.merchantId,
        key_id: 'programme-page',
        deadline: Date.now() + config.RPC_TIMEOUT_MS,
        params: { slug },
        query: {},
        body: checked.body,
      },
      config.RPC_TIMEOUT_MS,
    );
    if (result.kind === 'ok') {
      if (decodeJson<ApplicationReceived>(result.body).created) await limiter.made(programme.merchantId, email, ip);
      return sendPage(res, 200, thanksPage(programme));
    }
    if (result.kind === 'error' && result.error.code === 'INVALID_INPUT')
      return refill(result.error.details ?? [{ path: 'form', message: result.error.message }]);
    if (result.kind === 'error' && result.error.code === 'NOT_FOUND') return sendPage(res, 404, notFoundPage());
    unavailable(res);
  });

  return router;
}
