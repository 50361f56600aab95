import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { apiV1Document as buildOpenApi } from '@platform/gateway/http/openapi/documents';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  a: Ajv2020,
) => Ajv2020;

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/**
 * HTTP client for tests. Every JSON response it receives is checked against the OpenAPI document (the response
 * schema of the matched operation and status, or the error envelope): a mismatch throws, failing the test.
 */
export class ApiClient {
  readonly baseUrl: string;
  readonly key: string | undefined;

  constructor(baseUrl: string, key?: string) {
    this.baseUrl = baseUrl;
    this.key = key;
  }

  withKey(key: string | undefined): ApiClient {
    return new ApiClient(this.baseUrl, key);
  }

  get<T = any>(path: string, init: RequestOptions = {}) {
    return this.request<T>('GET', path, init);
  }
  post<T = any>(path: string, body?: unknown, init: RequestOptions = {}) {
    return this.request<T>('POST', path, { ...init, body });
  }
  patch<T = any>(path: string, body?: unknown, init: RequestOptions = {}) {
    return this.request<T>('PATCH', path, { ...init, body });
  }
  delete<T = any>(path: string, init: RequestOptions = {}) {
    return this.request<T>('DELETE', path, init);
  }

  async request<T = any>(method: string, path: string, init: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.key !== undefined && !('authorization' in headers)) headers['authorization'] = `Bearer ${this.key}`;
    let body: string | Buffer | undefined;
    if (init.raw !== undefined) body = init.raw;
    else if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body });
    const text = await res.text();
    if (res.status === 204 && text !== '')
      throw new Error(`${method} ${path} answered 204 with a body: ${text.slice(0, 200)}`);
    let parsed: unknown = undefined;
    if ((res.headers.get('content-type') ?? '').includes('application/json')) parsed = JSON.parse(text);
    if (!init.skipSchemaCheck) checkAgainstOpenApi(method, path, res.status, parsed);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }
}

export interface RequestOptions {
  body?: unknown;
  raw?: string | Buffer;
  headers?: Record<string, string>;
  skipSchemaCheck?: boolean;
}

// ---- response conformance ---------------------------------------------------------------------------------------

const doc = buildOpenApi() as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
ajv.addSchema({ ...doc, $id: 'openapi' });
const compiled = new Map<string, ValidateFunction>();

const pointer = (...parts: string[]) =>
  parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

function validatorFor(ref: string): ValidateFunction {
  let v = compiled.get(ref);
  if (!v) {
    v = ajv.compile({ $ref: `openapi#/${ref}` });
    compiled.set(ref, v);
  }
  return v;
}

const templates = Object.keys(doc.paths).map((p) => ({
  template: p,
  regex: new RegExp('^' + p.replace(/\{[^}]+\}/g, '[^/]+') + '$'),
}));

export function checkAgainstOpenApi(method: string, url: string, status: number, body: unknown): void {
  const path = url.split('?')[0]!;
  const match = templates.find((t) => t.regex.test(path));
  const op = match ? doc.paths[match.template]![method.toLowerCase()] : undefined;
  if (status >= 400) {
    // Every error, routed or not, is the one envelope.
    check(validatorFor(pointer('components', 'schemas', 'Error')), body, `${method} ${path} → ${status}`);
    if (op && status !== 404 && status !== 405 && !op.responses[String(status)]) {
      throw new Error(`OpenAPI: ${method} ${path} answered ${status}, which the document does not list`);
    }
    return;
  }
  if (!op) return; // not an API operation (healthz, openapi itself)
  if (!op.responses[String(status)])
    throw new Error(`OpenAPI: ${method} ${path} answered ${status}, which the document does not list`);
  if (status === 204) {
    if (body !== undefined) throw new Error(`OpenAPI: ${method} ${path} answered 204 with a body`);
    return;
  }
  if (path === '/api/v1/openapi') return;
  // A text answer (text/csv): the test parses and checks it itself.
  const content = (op.responses[String(status)] as { content?: Record<string, unknown> }).content ?? {};
  if (!('application/json' in content)) return;
  check(
    validatorFor(
      pointer(
        'paths',
        match!.template,
        method.toLowerCase(),
        'responses',
        String(status),
        'content',
        'application/json',
        'schema',
      ),
    ),
    body,
    `${method} ${path} → ${status}`,
  );
}

function check(validate: ValidateFunction, body: unknown, what: string) {
  if (!validate(body)) {
    throw new Error(
      `OpenAPI: response of ${what} does not match the document: ${JSON.stringify(validate.errors?.slice(0, 3))}\n${JSON.stringify(body).slice(0, 500)}`,
    );
  }
}
