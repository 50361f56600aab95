import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ascending, percentile } from './context.ts';
import type { Verdict } from './report.ts';

/**
 * Dashboard pages timed in Debian's Chromium (bench/dashboard.ts, bench/analytics-page.ts): signed in once, then
 * each page loaded afresh from the navigation until its data is on screen, the h1 shown and no "Loading …" status
 * left.
 */

/** Every page's target: its data on screen within a second, p95. */
const TARGET_MS = 1000;

export const hasChromium = () => existsSync('/usr/bin/chromium');

/** Chromium at 1280 px, signed in to the dashboard as `email`; `close` ends it. */
export async function signedInPage(
  gatewayUrl: string,
  email: string,
  password: string,
): Promise<{ page: Page; close: () => Promise<void> }> {
  const browser: Browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await page.goto(`${gatewayUrl}/dashboard/`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor({ timeout: 30_000 });
    return { page, close: () => browser.close() };
  } catch (err) {
    await browser.close();
    throw err;
  }
}

export interface PageLoads {
  /** The first load, before the two warm-up loads: not in the percentiles. */
  first: number;
  p50: number;
  p95: number;
  max: number;
}

/** `loads` fresh loads of `url` (after one first and two warm-up loads), until the page titled `title` shows its data. */
export async function timePageLoads(page: Page, url: string, title: string, loads: number): Promise<PageLoads> {
  const times: number[] = [];
  let first = NaN;
  for (let i = -2; i < loads; i++) {
    const started = performance.now();
    await page.goto(url, { waitUntil: 'commit' });
    // A function, not a string: the page's Content-Security-Policy forbids evaluating strings. It runs in the
    // page, whose globals this file (no DOM types) reaches through globalThis.
    await page.waitForFunction(
      (expected: string) => {
        const doc = (
          globalThis as unknown as {
            document: {
              querySelector(s: string): { textContent: string } | null;
              querySelectorAll(s: string): ArrayLike<{ textContent: string }>;
            };
          }
        ).document;
        const heading = doc.querySelector('main h1');
        return (
          !!heading &&
          heading.textContent === expected &&
          !Array.from(doc.querySelectorAll('[role=status]')).some((s) => s.textContent.startsWith('Loading'))
        );
      },
      title,
      { timeout: 30_000, polling: 'raf' },
    );
    if (i === -2) first = performance.now() - started;
    if (i >= 0) times.push(performance.now() - started);
  }
  const sorted = ascending(times);
  return {
    first,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    max: sorted[sorted.length - 1]!,
  };
}

/** The loads' figures as a table's cells (ms): first load, p50, p95, max. */
export const loadCells = (l: PageLoads) => [l.first, l.p50, l.p95, l.max].map((v) => v.toFixed(0));

/** The page's verdict against the target. */
export const loadVerdict = (name: string, loads: number, l: PageLoads): Verdict => ({
  target: `dashboard ${name}: data on screen, p95 of ${loads} loads ≤ 1 s`,
  measured: `${l.p95.toFixed(0)} ms`,
  pass: l.p95 <= TARGET_MS,
});
