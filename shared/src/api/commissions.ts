import { operation } from './define.ts';
import {
  Commission,
  CommissionIdParams,
  CommissionList,
  ListCommissionsQuery,
  UpdateCommissionBody,
} from '../schemas/commissions.ts';

export const commissionsApi = {
  listCommissions: operation({
    service: 'commissions',
    name: 'list',
    operationId: 'listCommissions',
    method: 'get',
    path: '/api/v1/commissions',
    scope: 'read',
    tag: 'Commissions',
    summary: 'List commissions, newest first, optionally by affiliate and status',
    query: ListCommissionsQuery,
    success: [{ status: 200, schema: CommissionList, description: 'a page of commissions' }],
  }),
  getCommission: operation({
    service: 'commissions',
    name: 'get',
    operationId: 'getCommission',
    method: 'get',
    path: '/api/v1/commissions/{commission_id}',
    scope: 'read',
    tag: 'Commissions',
    summary: 'Fetch one commission',
    params: CommissionIdParams,
    success: [{ status: 200, schema: Commission, description: 'the commission' }],
  }),
  updateCommission: operation({
    service: 'commissions',
    name: 'update',
    operationId: 'updateCommission',
    method: 'patch',
    path: '/api/v1/commissions/{commission_id}',
    scope: 'write',
    tag: 'Commissions',
    summary: 'Approve a pending commission, or void a pending or approved one',
    params: CommissionIdParams,
    body: UpdateCommissionBody,
    success: [{ status: 200, schema: Commission, description: 'the commission after the change' }],
  }),
} as const;
