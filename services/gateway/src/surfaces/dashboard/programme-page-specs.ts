import { Type } from '@sinclair/typebox';
import { ProgrammePage, ProgrammePageBody } from '@platform/shared/schemas/programme';
import { spec } from './define.ts';

/** An application waiting for the merchant's decision: the pending affiliate and what it told the merchant. */
const Application = Type.Object(
  {
    affiliate_id: Type.String({ examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
    display_name: Type.String({ examples: ['Jane Doe'] }),
    email: Type.String({ examples: ['jane@example.com'] }),
    website: Type.Union([Type.String(), Type.Null()], {
      description: 'null for a pending affiliate made through the API, not the page',
      examples: ['https://jane.example.com'],
    }),
    promotion: Type.Union([Type.String(), Type.Null()], { examples: ['A weekly newsletter on hiking gear'] }),
    parent_id: Type.Union([Type.String(), Type.Null()], { description: 'the affiliate whose recruit link it used' }),
    applied_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false, $id: 'Application' },
);
const ApplicationList = Type.Object(
  { data: Type.Array(Application, { description: 'newest first, at most 200' }) },
  { additionalProperties: false, $id: 'ApplicationList' },
);

/** Settings › Programme page and the applications to decide (routes-programme.ts), spread into dashboardSpecs. */
export const programmePageSpecs = {
  getProgrammePage: spec({
    operationId: 'getProgrammePage',
    permission: 'read',
    method: 'get',
    path: '/dashboard/api/programme',
    summary: 'The public programme page’s settings, and the commission terms it shows (computed, not stored)',
    success: { status: 200, schema: ProgrammePage, description: 'the page’s settings' },
  }),
  updateProgrammePage: spec({
    operationId: 'updateProgrammePage',
    permission: 'settings',
    method: 'patch',
    path: '/dashboard/api/programme',
    summary:
      'Set up or change the programme page: its slug (unique across merchants; 409 CONFLICT when taken) and the fields given',
    body: ProgrammePageBody,
    success: { status: 200, schema: ProgrammePage, description: 'the page’s settings afterwards' },
  }),
  listApplications: spec({
    operationId: 'listApplications',
    permission: 'read',
    method: 'get',
    path: '/dashboard/api/applications',
    summary: 'The pending affiliates with their applications, to approve or reject (PATCH /api/v1/affiliates/{id})',
    success: { status: 200, schema: ApplicationList, description: 'the applications' },
  }),
};
