import { operation } from './define.ts';
import { Analytics, AnalyticsQuery } from '../schemas/analytics.ts';

export const analyticsApi = {
  getAnalytics: operation({
    service: 'events',
    name: 'analytics',
    operationId: 'getAnalytics',
    method: 'get',
    path: '/api/v1/analytics',
    scope: 'read',
    tag: 'Analytics',
    summary: 'Clicks, conversions, revenue and commissions over time or by a dimension',
    query: AnalyticsQuery,
    success: [{ status: 200, schema: Analytics, description: 'the measures of each bucket or dimension value' }],
  }),
} as const;
