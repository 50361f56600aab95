import type { TObject, TSchema, Static } from '@sinclair/typebox';
import type { ServiceName } from '../catalogue.ts';
import { NoInput } from '../schemas/common.ts';

export type Scope = 'read' | 'write';

/**
 * One entry per REST operation: the gateway routes by it, the owning service validates with its schemas, and the
 * OpenAPI document is generated from it. The schemas are the single source of each payload's shape.
 */
export interface ApiOperation<P extends TObject = TObject, Q extends TObject = TObject, B extends TSchema = TSchema> {
  service: ServiceName;
  /** The operation's name inside its service: the last token of its RPC subject. */
  name: string;
  operationId: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI path template. */
  path: string;
  scope: Scope;
  summary: string;
  tag: string;
  params: P;
  query: Q;
  body: B | null;
  /** The answers; `contentType` names a body that is not JSON (the service answers it as text, e.g. text/csv). */
  success: { status: 200 | 201 | 204; schema: TSchema; description: string; contentType?: 'text/csv' }[];
}

export type OperationInput<O extends ApiOperation> = {
  params: Static<O['params']>;
  query: Static<O['query']>;
  body: [O['body']] extends [null] ? undefined : Static<NonNullable<O['body']>>;
};

export const operation = <P extends TObject, Q extends TObject, B extends TSchema>(
  o: Omit<ApiOperation<P, Q, B>, 'params' | 'query' | 'body'> & { params?: P; query?: Q; body?: B },
): ApiOperation<P, Q, B> => ({
  ...o,
  params: (o.params ?? NoInput) as P,
  query: (o.query ?? NoInput) as Q,
  body: o.body ?? null,
});
