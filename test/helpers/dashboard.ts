import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { loadEventsConfig } from '@platform/events/config';
import { startEventsService } from '@platform/events/service';
import { createUser, type Plan } from '../../scripts/admin/commands.ts';
import { browserContext } from './browser.ts';
import { startCommissions } from './commissions.ts';
import { captureLogger, startPlatform, TEST_PASSWORD_COST, type Platform, type TestLike } from './platform.ts';
import { startDispatcher } from './webhooks.ts';

/**
 * The dashboard's tests: the platform (gateway with the dashboard, and whichever services a file needs) on the
 * file's own database and NATS prefix, merchants with dashboard users, and pages in real Chromium (browser.ts).
 */
export const PASSWORD = 'correct horse battery';

/** A dashboard user whose password is hashed at the suite's cost (TEST_PASSWORD_COST), as the gateway is told. */
export const createDashboardUser = (sql: Platform['sql'], merchantId: string, email: string, password = PASSWORD) =>
  createUser(sql, merchantId, email, password, TEST_PASSWORD_COST);

export async function startDashboardPlatform(
  t: TestLike,
  opts: { services?: ('events' | 'commissions' | 'dispatcher')[]; env?: Record<string, string> } = {},
) {
  const platform = await startPlatform(t, { env: { LOG_LEVEL: 'info', ...opts.env } });
  const services = new Set(opts.services ?? []);
  if (services.has('events')) {
    const events = await startEventsService(loadEventsConfig({ ...platform.env }), captureLogger('events').log);
    t.teardown(() => events.close());
  }
  if (services.has('commissions')) await startCommissions(t, platform);
  const dispatcher = services.has('dispatcher') ? await startDispatcher(t, platform) : undefined;
  return { platform, dispatcherLogs: dispatcher?.logs ?? [] };
}

export interface DashboardMerchant {
  id: string;
  email: string;
  /** A key of the merchant (read,write), for checking through the public API what the dashboard did. */
  key: string;
  client: Platform['client'] extends (...a: never[]) => infer C ? C : never;
}

/** A merchant on `plan` with a dashboard user (and, made while on growth, an API key for the test's own checks). */
export async function dashboardMerchant(
  platform: Platform,
  plan: Plan = 'growth',
  email = `owner-${Math.random().toString(36).slice(2, 8)}@example.com`,
): Promise<DashboardMerchant> {
  const m = await platform.merchant({ plan });
  await createDashboardUser(platform.sql, m.id, email);
  return { id: m.id, email, key: m.key, client: m.client };
}

/** Signs in over HTTP: the session cookie's value and the CSRF token. */
export async function signInHttp(
  baseUrl: string,
  email: string,
  password = PASSWORD,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${baseUrl}/dashboard/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ email, password }),
  });
  const body = (await res.json()) as { csrf_token?: string; error?: { code: string; message: string } };
  const cookie = /dash_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  return {
    status: res.status,
    body,
    cookie,
    csrf: body.csrf_token,
    setCookie: res.headers.get('set-cookie'),
    headers: res.headers,
  };
}

/** A request as the dashboard makes it: the session cookie, and the CSRF token unless `csrf` is false. */
export async function sessionRequest(
  baseUrl: string,
  session: { cookie?: string | undefined; csrf?: string | undefined },
  method: string,
  path: string,
  body?: unknown,
  opts: { csrf?: boolean } = {},
) {
  const headers: Record<string, string> = { cookie: `dash_session=${session.cookie}` };
  if (opts.csrf !== false && session.csrf) headers['x-csrf-token'] = session.csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, text, headers: res.headers };
}

export interface DashboardPage {
  page: Page;
  /** Console errors and uncaught page errors seen so far. */
  consoleErrors: string[];
}

/** A page in a fresh browser context of the test `t` (its own cookies) at `width` px, collecting console errors. */
export async function openPage(t: TestLike, width = 1280): Promise<DashboardPage> {
  const context = await browserContext(t, { viewport: { width, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(e.message));
  return { page, consoleErrors };
}

/** Signs in through the form and waits for the Overview. */
export async function signInBrowser(page: Page, baseUrl: string, email: string, password = PASSWORD): Promise<void> {
  await page.goto(`${baseUrl}/dashboard/`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core run in the page: the serious and critical violations, as "rule: target" lines. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's Content-Security-Policy (no inline scripts) stays in force.
  await page.evaluate(axeSource);
  // The callbacks run in the page: its globals are reached through globalThis (this file has no DOM types).
  const violations = await page.evaluate(async () => {
    const page = globalThis as unknown as {
      axe: {
        run: (ctx: unknown) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
      };
      document: unknown;
    };
    const result = await page.axe.run(page.document);
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  return violations;
}

/** Elements that reach past the viewport's right edge (outside scrolling containers): what would scroll sideways. */
export async function overflowingElements(page: Page): Promise<string[]> {
  // A string, not a function: the TypeScript loader's helpers (__name) do not exist in the page.
  return page.evaluate(`(() => {
    const found = [];
    const walk = (el) => {
      if (found.length >= 5) return;
      if (el.getBoundingClientRect().right > innerWidth + 1) found.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + '.' + String(el.className));
      if (!['auto', 'scroll', 'hidden'].includes(getComputedStyle(el).overflowX)) for (const child of el.children) walk(child);
    };
    walk(document.body);
    return found;
  })()`);
}
