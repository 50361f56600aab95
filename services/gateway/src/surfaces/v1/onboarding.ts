import express, { type Request, type Response } from 'express';
import { RPC_OUTCOME_HEADER, rpcSubject } from '@platform/shared/catalogue';
import type { Logger } from '@platform/shared/log';
import { decodeJson, encodeJson } from '@platform/shared/nats';
import type { OnboardingReply, OnboardingRequest } from '@platform/shared/payments/rpc';
import type { Requester } from '../../http/requester.ts';
import { sendPage } from '../../http/page-shell.ts';
import { NOT_FOUND_PAGE, renderOnboardingPage } from './onboarding-page.ts';

/**
 * The hosted onboarding page of account links, /connect/onboarding/{token}: no key, the token is the credential.
 * The payments service decides (open once, submit once, refresh_url when used or expired); the gateway renders.
 */
export function createOnboardingRoutes(deps: {
  requester: Requester;
  prefix: string;
  timeoutMs: number;
  log: Logger;
}): express.Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });

  const ask = async (
    req: Request,
    res: Response,
    operation: 'onboarding_open' | 'onboarding_submit',
    body?: Record<string, string>,
  ) => {
    res.locals['route'] = `connect.${operation}`;
    res.setHeader('Cache-Control', 'no-store');
    const request: OnboardingRequest = {
      request_id: res.locals['requestId'] as string,
      deadline: Date.now() + deps.timeoutMs,
      token: String(req.params['token']),
      ...(body ? { form: body } : {}),
    };
    const answer = await deps.requester.request(
      rpcSubject(deps.prefix, 'payments', operation),
      encodeJson(request),
      deps.timeoutMs,
    );
    if (answer.kind !== 'reply' || answer.msg.headers?.get(RPC_OUTCOME_HEADER) !== 'ok') {
      res.setHeader('Retry-After', '1');
      return void res.status(503).type('text/plain').send('The page is temporarily unavailable; try again.');
    }
    const reply = decodeJson<OnboardingReply>(answer.msg.data);
    if (reply.kind === 'redirect') return res.redirect(303, reply.url);
    if (reply.kind === 'not_found') return sendPage(res, 404, NOT_FOUND_PAGE);
    // The form posts to this page, and its answer redirects to return_url (or refresh_url): form-action allows both.
    sendPage(res, Object.keys(reply.problems).length ? 400 : 200, renderOnboardingPage(reply), {
      formTargets: reply.redirect_origins,
    });
  };

  router.get('/connect/onboarding/:token', (req, res, next) => void ask(req, res, 'onboarding_open').catch(next));
  router.post('/connect/onboarding/:token', form, (req, res, next) => {
    const fields = Object.fromEntries(
      Object.entries((req.body ?? {}) as Record<string, unknown>).filter(
        (e): e is [string, string] => typeof e[1] === 'string',
      ),
    );
    void ask(req, res, 'onboarding_submit', fields).catch(next);
  });
  return router;
}
