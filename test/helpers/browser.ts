import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import type { TestLike } from './platform.ts';

/**
 * Chromium for the browser tests: one per test process, or, under npm test, the one browser server that
 * scripts/test.ts starts for the whole run (TEST_BROWSER_WS_ENDPOINT), which saves starting Chromium in every file.
 * Each test gets a browser context of its own (its own cookies and storage), closed at its teardown.
 */
const LAUNCH = {
  // Debian's Chromium, headless; never a downloaded browser.
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
};

/** Starts the run's browser server (scripts/test.ts); its `wsEndpoint` goes to the test files. */
export const launchBrowserServer = () => chromium.launchServer(LAUNCH);

let browser: Promise<Browser> | undefined;

async function processBrowser(): Promise<Browser> {
  if (!browser) {
    const endpoint = process.env['TEST_BROWSER_WS_ENDPOINT'];
    browser = endpoint ? chromium.connect(endpoint) : chromium.launch(LAUNCH);
    // Closed (or, for the run's server, disconnected from) when the file's tests have finished. tap is imported
    // here, not at the top: scripts/test.ts imports this file, and importing tap starts a test run.
    const opened = browser;
    const { default: root } = await import('tap');
    root.teardown(async () => (await opened).close());
  }
  return browser;
}

/** A fresh browser context for the test `t`: its own cookies, closed at the test's teardown. */
export async function browserContext(
  test: TestLike,
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<BrowserContext> {
  const context = await (await processBrowser()).newContext(options);
  test.teardown(() => context.close().catch(() => {}));
  return context;
}
