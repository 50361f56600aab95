import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from './common.ts';

/** POST /api/v1/affiliates/{affiliate_id}/portal_sessions: a merchant signs its affiliate into the portal it embeds. */
export const CreatePortalSessionBody = Type.Object(
  {
    return_url: Type.Optional(
      Type.String({
        format: 'uri',
        maxLength: 2048,
        description:
          "where the portal's Back link goes: a URL on one of the origins the merchant allows to frame the portal (Settings → Programme)",
        examples: ['https://app.example.com/partners'],
      }),
    ),
  },
  {
    additionalProperties: false,
    $id: 'CreatePortalSession',
    examples: [{ return_url: 'https://app.example.com/partners' }],
  },
);
export type CreatePortalSessionBody = Static<typeof CreatePortalSessionBody>;

export const PortalSession = Type.Object(
  {
    object: Type.Literal('portal_session'),
    url: Type.String({
      format: 'uri',
      description:
        "opens the affiliate portal signed in as this affiliate, for this programme only; works once, e.g. as an iframe's src",
      examples: ['https://affiliates.example.com/portal/link/Hq3Zt0c8pQ2vN7xLm4RkWbYs9eJdA1uFo6iGtC5hKzE'],
    }),
    expires_at: Timestamp('5 minutes after creation: open it at once'),
  },
  {
    additionalProperties: false,
    $id: 'PortalSession',
    examples: [
      {
        object: 'portal_session',
        url: 'https://affiliates.example.com/portal/link/Hq3Zt0c8pQ2vN7xLm4RkWbYs9eJdA1uFo6iGtC5hKzE',
        expires_at: '2026-11-27T10:05:00.000Z',
      },
    ],
  },
);
export type PortalSession = Static<typeof PortalSession>;
