import { Type } from '@sinclair/typebox';
import { operation } from './define.ts';
import { ApplicationBody, ApplicationReceived } from '../schemas/programme.ts';

/**
 * What the programme page (/p/{slug}, the gateway's surfaces/programme/router.ts) asks of the affiliates service.
 * Not a route of /api/v1: the gateway finds the merchant by the page's slug and sends it with the request, as a key
 * would.
 */
export const programmePageApi = {
  applyToProgramme: operation({
    service: 'affiliates',
    name: 'programme_apply',
    operationId: 'applyToProgramme',
    method: 'post',
    path: '/p/{slug}',
    scope: 'write',
    tag: 'Programme page',
    summary:
      'An application: a pending affiliate (approved with auto-approve), its application and the mail, in one transaction',
    params: Type.Object({ slug: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
    body: ApplicationBody,
    success: [{ status: 200, schema: ApplicationReceived, description: 'received (the same for a known address)' }],
  }),
} as const;
