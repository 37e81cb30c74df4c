/**
 * Shared support of the console's browser tests (docs/testing.md): Debian's Chromium driven by `playwright-core`,
 * against the real embedded platform filled by `agp simulate`, signed in through the console's own sign-in page.
 * Each test file calls {@link describeConsole}; inside, `ctx()` gives the platform, a way to open signed-in pages at
 * a given width, screenshots (to test-artifacts/console/, gitignored) and the axe check.
 *
 * Where no Chromium is found the whole file skips with one printed line saying so and how to install it (as
 * test/support/infra.ts does for PostgreSQL and NATS). Set AGP_CHROMIUM to use another Chromium-based browser.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { main } from '@agp/cli';
import type { SimulationReport } from '@agp/simulator';
import { call, eventually, type BootedPlatform } from '../support/http.js';
import { bootEmbedded, type BootOptions } from '../support/modes.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Where screenshots go (gitignored); one PNG per test, named after it. */
export const ARTIFACTS_DIR = join(ROOT, 'test-artifacts/console');

/** Viewport widths the console must work at (docs/console.md). */
export const DESKTOP = { width: 1280, height: 900 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/** The Chromium to drive: AGP_CHROMIUM, else the first of Debian's and the usual paths that exists; '' if none. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGP_CHROMIUM) return existsSync(env.AGP_CHROMIUM) ? env.AGP_CHROMIUM : '';
  return ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'].find((p) => existsSync(p)) ?? '';
}

/**
 * True when the browser tests must skip (no Chromium); prints the one-line reason and how to fix it.
 * Source: docs/testing.md (skip with a printed reason, never silently).
 */
export function skipBrowser(): boolean {
  if (chromiumPath()) return false;
  console.warn(
    `[agp tests] console browser tests skipped: no Chromium found (${process.env.AGP_CHROMIUM ? `AGP_CHROMIUM=${process.env.AGP_CHROMIUM} does not exist` : 'looked for /usr/bin/chromium, chromium-browser, google-chrome'}). ` +
      'Install it with `apt-get install -y chromium` (as .ci/run does) or set AGP_CHROMIUM to a Chromium binary.',
  );
  return true;
}

/** What a console test file gets from {@link describeConsole}. */
export interface ConsoleContext {
  /** The embedded platform (its URL, write and read keys of organisation `acme`). */
  platform: BootedPlatform;
  /** What `agp simulate` reported when it filled the platform. */
  simulation: SimulationReport;
  browser: Browser;
  /**
   * A new page in a fresh browser context (own sessionStorage) at `viewport`, signed in with `key` (default: the read
   * key) through the sign-in page, at `path` (default '/'); resolves once the console's navigation or the sign-in
   * error shows. Pass `key: null` to stay on the sign-in page. Page errors and dialogs go to {@link pageErrors}.
   */
  open(path?: string, opts?: { key?: string | null; viewport?: { width: number; height: number } }): Promise<Page>;
  /** Save a full-page screenshot as test-artifacts/console/<name>.png; returns its path. */
  screenshot(page: Page, name: string): Promise<string>;
  /** Run axe on the page and fail on any serious or critical violation (listing them). */
  expectAccessible(page: Page, name: string): Promise<void>;
  /** Call the API as an outside client would (to check what the console shows, or what it changed). */
  api(method: string, path: string, opts?: { key?: string; body?: unknown }): Promise<{ status: number; body: any }>;
  /** Uncaught page errors seen in any page opened by {@link open} (a test asserts it stays empty where it matters). */
  pageErrors: string[];
}

/** Options of {@link describeConsole}. */
export interface DescribeConsoleOptions {
  /** `agp simulate` arguments after --url/--key (default: 4 agents, about 1000 events). */
  simulate?: string[];
  /** Platform settings, or a function giving them (called when the platform boots, e.g. after a fake LLM started). */
  boot?: BootOptions | (() => BootOptions | Promise<BootOptions>);
}

// A fixed seed: the pages' tests count what the simulation made (e.g. more than three pending approvals), so the data must be the same every run.
const DEFAULT_SIMULATION = ['--agents', '4', '--rate', '2000', '--duration', '0.5', '--batch-size', '250', '--seed', '20261125', '--quiet'];

/**
 * A describe block for console browser tests: builds the console (skipped when unchanged), boots the embedded
 * platform, fills it with `agp simulate` and waits until the read models hold what it sent, launches Chromium; tears
 * all of it down afterwards. Skips with one printed reason when no Chromium is found ({@link skipBrowser}).
 */
export function describeConsole(name: string, body: (ctx: () => ConsoleContext) => void, opts: DescribeConsoleOptions = {}): void {
  describe.skipIf(skipBrowser())(name, () => {
    let context: ConsoleContext | undefined;
    const contexts: BrowserContext[] = [];
    let platform: BootedPlatform | undefined;
    let browser: Browser | undefined;
    beforeAll(async () => {
      execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'console', '--quiet'], { cwd: ROOT, stdio: 'inherit' });
      mkdirSync(ARTIFACTS_DIR, { recursive: true });
      platform = await bootEmbedded(typeof opts.boot === 'function' ? await opts.boot() : opts.boot);
      const p = platform;
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(['simulate', '--url', p.url, '--key', p.writeKey, ...(opts.simulate ?? DEFAULT_SIMULATION), '--json'], { env: {}, out: (t) => out.push(t), err: (t) => err.push(t) });
      expect(code, err.join('')).toBe(0);
      const simulation = JSON.parse(out.join('')) as SimulationReport;
      const api = async (method: string, path: string, o: { key?: string; body?: unknown } = {}) => {
        const r = await call(p, method, path, { key: o.key ?? p.writeKey, body: o.body });
        return { status: r.status, body: r.body };
      };
      // Wait until the read models hold every simulated intervention and run.
      await eventually(async () => (await api('GET', '/api/v1/interventions?limit=1')).body?.total === simulation.by_event_type['intervention.create'], 30_000);
      await eventually(async () => (await api('GET', '/api/v1/runs?limit=1')).body?.total === simulation.runs, 30_000);
      browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
      const b = browser;
      const pageErrors: string[] = [];
      context = {
        platform: p,
        simulation,
        browser: b,
        pageErrors,
        api,
        async open(path = '/', o = {}) {
          const bc = await b.newContext({ viewport: o.viewport ?? DESKTOP, baseURL: p.url });
          contexts.push(bc);
          const page = await bc.newPage();
          // Generous: the machine may be busy (two cores; the platform, Chromium and the test share them).
          page.setDefaultTimeout(60_000);
          page.on('pageerror', (e) => pageErrors.push(`${path}: ${e.message}`));
          page.on('dialog', (d) => {
            pageErrors.push(`${path}: unexpected dialog "${d.message()}"`);
            void d.dismiss();
          });
          const failed: string[] = [];
          page.on('response', (r) => void (r.status() >= 400 && !r.url().includes('/api/') && failed.push(`${r.status()} ${r.url()}`)));
          await page.goto(path);
          const key = o.key === undefined ? p.readKey : o.key;
          if (key !== null) {
            await page
              .getByLabel('API key')
              .waitFor()
              .catch(async (err: Error) => {
                throw new Error(`the sign-in page did not show at ${path}: ${err.message}; failed loads: ${failed.join(', ') || 'none'}; page: ${(await page.content()).slice(0, 800)}`);
              });
            await page.getByLabel('API key').fill(key);
            await page.getByRole('button', { name: 'Sign in' }).click();
            // Signed in (the navigation shows) or refused (the sign-in error shows).
            await page.locator('nav[aria-label="Console"], .sign-in-error').first().waitFor();
          }
          return page;
        },
        async screenshot(page, file) {
          const path = join(ARTIFACTS_DIR, `${file.replace(/[^\w.-]+/g, '-')}.png`);
          await page.screenshot({ path, fullPage: true });
          return path;
        },
        async expectAccessible(page, what) {
          const result = await new AxeBuilder({ page }).analyze();
          const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
          expect(bad.map((v) => `${what}: ${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join('; ')}`)).toEqual([]);
        },
      };
    }, 180_000);
    afterAll(async () => {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser?.close();
      await platform?.stop();
    });
    body(() => {
      if (!context) throw new Error('console test context not ready');
      return context;
    });
  });
}

/** The horizontal overflow of the page in CSS px (0 when nothing sticks out sideways). */
export async function horizontalOverflow(page: Page): Promise<number> {
  return Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
}

/**
 * Wait until no loading state (`.state-loading`) is on the page — a page may show several at once (the policies page
 * loads kill switches and policies side by side). @throws when one is still there after `timeoutMs`.
 */
export async function settled(page: Page, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await page.locator('.state-loading').count()) > 0) {
    if (Date.now() > until) throw new Error(`still loading after ${timeoutMs} ms: ${(await page.locator('.state-loading').allTextContents()).join('; ')}`);
    await page.waitForTimeout(50);
  }
}
