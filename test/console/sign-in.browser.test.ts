import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { call, type BootedPlatform } from '../support/http.js';
import { bootEmbedded } from '../support/modes.js';
import { startTestProvider, type TestProvider } from '../support/oidc-provider.js';
import { chromiumPath, skipBrowser } from './support.js';

/**
 * A person signs in to the console in Chromium through a real OpenID provider (`oidc-provider` on loopback), acts,
 * switches organisation and signs out (docs/auth.md, docs/console.md). The platform's public URL is `http://agp.test`
 * (as behind a reverse proxy); Chromium resolves that name to the platform's loopback port, so cookies, `Origin` and
 * the provider's redirects are those a deployed console sees.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const PUBLIC_URL = 'http://agp.test';

describe.skipIf(skipBrowser())('console sign-in through the OpenID provider (Chromium)', () => {
  let provider: TestProvider;
  let platform: BootedPlatform;
  let browser: Browser;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'console', '--quiet'], { cwd: ROOT, stdio: 'inherit' });
    provider = await startTestProvider(`${PUBLIC_URL}/auth/callback`, { alice: { email: 'alice@acme.test', name: 'Alice Admin' } });
    platform = await bootEmbedded({ env: { AGP_AUTH_MODE: 'both', AGP_PUBLIC_URL: PUBLIC_URL, AGP_OIDC_ISSUER: provider.issuer, AGP_OIDC_CLIENT_ID: provider.clientId, AGP_OIDC_CLIENT_SECRET: provider.clientSecret, AGP_ADMIN_EMAILS: 'alice@acme.test' } });
    const port = new URL(platform.url).port;
    browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', `--host-resolver-rules=MAP agp.test 127.0.0.1:${port}`] });
  }, 180_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await platform?.stop().catch(() => undefined);
    await provider?.close().catch(() => undefined);
  });

  async function newPage(): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(60_000);
    page.on('pageerror', (e) => pageErrors.push(e.message));
    return page;
  }

  it('signs in at the provider, lands on the page it started from, acts as the person, switches organisation and signs out', async () => {
    const page = await newPage();
    await page.goto(`${PUBLIC_URL}/policies`);
    // Both ways are offered (AGP_AUTH_MODE=both): the provider's button and the key field.
    const sso = page.getByRole('link', { name: 'Sign in with your organisation’s account' });
    await sso.waitFor();
    expect(await page.getByLabel('API key').count()).toBe(1);
    await sso.click();
    await page.locator('nav[aria-label="Console"]').waitFor();
    expect(new URL(page.url()).pathname).toBe('/policies');
    await page.getByText('alice@acme.test').waitFor();
    await page.locator('.scope-badge', { hasText: 'admin' }).waitFor();

    // A write made with the cookie: the browser sends Origin itself; the change is recorded as the person.
    await page.getByRole('button', { name: 'Engage the organisation kill switch' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Reason (recorded on the change)').fill('signed-in test');
    await dialog.getByRole('button', { name: 'Engage kill switch' }).click();
    await page.getByRole('button', { name: 'Release the organisation kill switch' }).waitFor();
    const me = (await call(platform, 'GET', '/api/v1/kill-switches', { key: platform.readKey })).body.organization;
    expect(me).toMatchObject({ engaged: true, reason: 'signed-in test', actor_name: 'alice@acme.test' });
    expect(me.changed_by).toMatch(/^user:/);

    // A second organisation: the header offers a switch; there she is a viewer, and write controls are disabled.
    const other = (await call(platform, 'GET', '/api/v1/auth/key', { key: platform.otherOrgAdminKey })).body.organization_id as string;
    expect((await call(platform, 'POST', '/api/v1/members', { key: platform.otherOrgAdminKey, body: { email: 'alice@acme.test', role: 'viewer' } })).status).toBe(201);
    await page.reload();
    const switcher = page.getByLabel('Organisation');
    await switcher.waitFor();
    await switcher.selectOption(other);
    await page.locator('.scope-badge', { hasText: 'viewer' }).waitFor();
    await page.getByRole('button', { name: 'Engage the organisation kill switch' }).waitFor();
    expect(await page.getByRole('button', { name: 'Engage the organisation kill switch' }).isDisabled()).toBe(true);
    await switcher.selectOption('acme');
    await page.locator('.scope-badge', { hasText: 'admin' }).waitFor();

    // A tab signed in with a key stays the key's, though the browser also holds the person's cookie.
    const keyed = await page.context().newPage();
    await keyed.addInitScript(`sessionStorage.setItem('agp.console.key', ${JSON.stringify(platform.readKey)}); sessionStorage.setItem('agp.console.key-info', ${JSON.stringify(JSON.stringify({ name: 'the read key', scope: 'read' }))});`);
    const asked: string[] = [];
    keyed.on('request', (r) => void asked.push(new URL(r.url()).pathname));
    await keyed.goto(`${PUBLIC_URL}/policies`);
    await keyed.locator('nav[aria-label="Console"]').waitFor();
    await keyed.waitForLoadState('networkidle');
    expect(asked).toContain('/auth/config');
    expect(asked).not.toContain('/api/v1/auth/me');
    expect(await keyed.locator('.key-name').textContent()).toBe('the read key');
    expect(await keyed.locator('.scope-badge').textContent()).toBe('read-only key');
    await keyed.close();

    // Sign out: the session is revoked at the platform, and a reload shows the sign-in page.
    const cookie = (await page.context().cookies(PUBLIC_URL)).find((c) => c.name === 'agp_session');
    expect(cookie?.httpOnly).toBe(true);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await sso.waitFor();
    await page.reload();
    await sso.waitFor();
    const after = await fetch(`${platform.url}/api/v1/auth/me`, { headers: { cookie: `agp_session=${cookie!.value}` } });
    expect(after.status).toBe(401);
    expect(pageErrors).toEqual([]);
  });
});
