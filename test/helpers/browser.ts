import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import t from 'tap';
import type { TestLike } from './platform.ts';

/**
 * Chromium for the browser tests: one per test process, launched on first use and closed when the file's tests
 * have finished. Each test gets a browser context of its own (its own cookies and storage), closed at its teardown.
 * (A browser server shared by a whole run was tried and dropped: a remote browser gives no download paths, which
 * the export tests read.)
 */
let browser: Promise<Browser> | undefined;

function processBrowser(): Promise<Browser> {
  if (!browser) {
    // Debian's Chromium, headless; never a downloaded browser.
    browser = chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    const opened = browser;
    t.teardown(async () => (await opened).close());
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
