import express, { type Request, type Response } from 'express';
import { onboardingPageApi } from '@platform/shared/api/tax-forms';
import type { ApiOperation } from '@platform/shared/api';
import type { ErrorDetail } from '@platform/shared/errors';
import { decodeJson } from '@platform/shared/nats';
import type { OnboardingState } from '@platform/shared/schemas/tax-forms';
import { VISIT_COOKIE } from '@platform/shared/schemas/tracking';
import type { GatewayConfig } from '../../config.ts';
import { forward, type ForwardResult } from '../../http/forward.ts';
import { readCookie } from '../../http/cookies.ts';
import type { Requester } from '../../http/requester.ts';
import { toExpressPath } from '../../http/openapi/express-path.ts';
import { sendPage, type Page } from '../../http/page-shell.ts';
import { formPage, messagePage, submittedPage, type Refill } from './html.ts';
import { openOnboardingPage, submitOnboardingPage } from './specs.ts';
import { submission } from './submission.ts';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const FORM_LIMIT = '16kb';

/**
 * The affiliate onboarding page, GET and POST /onboarding/{token}: no key, no sign-in; the link's token is the only
 * credential. Mounted before the /api/v1 checks. The affiliates service does the work (onboardingPageApi): the page
 * only renders. A form POST cannot be forged from another site, since nobody else knows the single-use token that
 * is its address; the answers are never cached and carry no referrer (helmet's Referrer-Policy: no-referrer), so
 * the token does not leak to other sites.
 */
export function createOnboardingPage(deps: {
  config: GatewayConfig;
  requester: Requester;
  maxPayload: () => number;
}): express.Router {
  const { config } = deps;
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: FORM_LIMIT, parameterLimit: 64 });

  const ask = (op: ApiOperation, res: Response, token: string, body: unknown): Promise<ForwardResult> =>
    forward(
      deps.requester,
      deps.maxPayload(),
      config.NATS_PREFIX,
      op,
      {
        request_id: res.locals['requestId'] as string,
        // The service takes the merchant from the link the token names.
        merchant_id: '',
        key_id: 'onboarding-link',
        deadline: Date.now() + config.RPC_TIMEOUT_MS,
        params: { token },
        query: {},
        body,
      },
      config.RPC_TIMEOUT_MS,
    );

  // The form posts to the page itself: the shell's form-action 'self' allows it.
  const send = (res: Response, status: number, page: Page) => sendPage(res, status, page);

  /** Answers a result that is not the page's own: the link is unknown, used or expired, or nobody answered. */
  const sendRefusal = (res: Response, result: ForwardResult) => {
    if (result.kind === 'error' && result.error.code === 'NOT_FOUND')
      return send(res, 404, messagePage('Link not found', 'This onboarding link is not valid. Ask for a new one.'));
    if (result.kind === 'error' && result.error.code === 'CONFLICT')
      return send(res, 410, messagePage('Link no longer valid', `${result.error.message}. Ask for a new one.`));
    res.setHeader('Retry-After', '1');
    send(res, 503, messagePage('Try again', 'The service is temporarily unavailable. Reload this page in a moment.'));
  };

  const stateOf = (result: ForwardResult) =>
    result.kind === 'ok' ? decodeJson<OnboardingState>(result.body) : undefined;

  const closedPage = (state: OnboardingState) => {
    if (state.status === 'used')
      return messagePage('Link already used', 'This onboarding link has already been used. Ask for a new one.');
    if (state.status === 'revoked')
      return messagePage(
        'Link replaced',
        'This onboarding link was replaced by a newer one. Use the newest link you were sent, or ask for a new one.',
      );
    return messagePage('Link expired', 'This onboarding link has expired. Ask for a new one.');
  };

  router.get(toExpressPath(openOnboardingPage.path), async (req: Request, res: Response) => {
    res.locals['route'] = 'onboarding.open';
    const token = req.params['token'] as string;
    if (!TOKEN.test(token)) return sendRefusal(res, { kind: 'error', error: { code: 'NOT_FOUND', message: '' } });
    const visitor = readCookie(req, VISIT_COOKIE);
    const result = await ask(onboardingPageApi.openOnboarding, res, token, visitor ? { visitor_id: visitor } : {});
    const state = stateOf(result);
    if (!state) return sendRefusal(res, result);
    if (state.status !== 'open') return send(res, 410, closedPage(state));
    send(res, 200, formPage(state, req.originalUrl));
  });

  router.post(toExpressPath(submitOnboardingPage.path), form, async (req: Request, res: Response) => {
    res.locals['route'] = 'onboarding.submit';
    const token = req.params['token'] as string;
    if (!TOKEN.test(token)) return sendRefusal(res, { kind: 'error', error: { code: 'NOT_FOUND', message: '' } });
    const fields = (req.body ?? {}) as Refill;
    const result = await ask(onboardingPageApi.submitOnboarding, res, token, submission(fields));
    const state = stateOf(result);
    if (state) return send(res, 200, submittedPage(state));
    if (result.kind !== 'error' || result.error.code !== 'INVALID_INPUT') return sendRefusal(res, result);
    // Refused input: the page again, with what is wrong, once the link's state is read anew.
    const current = stateOf(await ask(onboardingPageApi.openOnboarding, res, token, {}));
    if (!current) return sendRefusal(res, result);
    if (current.status !== 'open') return send(res, 410, closedPage(current));
    send(res, 400, formPage(current, req.originalUrl, result.error.details ?? ([] as ErrorDetail[]), fields));
  });

  return router;
}
