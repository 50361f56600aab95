import { operation } from './define.ts';
import { ConversionEvent, RecordEventBody } from '../schemas/events-api.ts';

export const eventsApi = {
  recordEvent: operation({
    service: 'events',
    name: 'record',
    operationId: 'recordEvent',
    method: 'post',
    path: '/api/v1/events',
    scope: 'write',
    tag: 'Events',
    summary:
      'Record a conversion event, attributed by referral cookie or coupon; idempotent on event_type and external_id',
    body: RecordEventBody,
    success: [
      { status: 201, schema: ConversionEvent, description: 'the event, recorded now' },
      { status: 200, schema: ConversionEvent, description: 'the event recorded earlier with the same body' },
    ],
  }),
} as const;
