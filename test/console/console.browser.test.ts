import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { eventually } from '../support/http.js';
import { DEFAULT_ANSWER, startFakeLlm, type FakeLlm } from '../support/fake-llm.js';
import { describeConsole, horizontalOverflow, PHONE, settled } from './support.js';

/**
 * The web console in a real browser (docs/console.md; every page and its bad inputs): Debian's Chromium against the embedded platform
 * filled by `agp simulate`, for the overview, interventions, approvals, policies and runs pages (the evals, benchmarks,
 * tool gateway and replay pages have their own file). Every test saves a screenshot to test-artifacts/console/.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const T = { timeout: 240_000 };

/** A stored XSS payload: executing it would set `window.__agpXss`. */
const XSS = '<img src=x onerror="window.__agpXss=1"><script>window.__agpXss=2</script>';

/** Whether any payload ran in the page. */
const xssRan = async (page: Page) => (await page.evaluate('window.__agpXss === undefined ? 0 : window.__agpXss')) !== 0;

describe('the console bundle', () => {
  it('keeps the initial JS (entry chunk and what index.html preloads) under 300 kB gzipped', () => {
    execFileSync(process.execPath, ['scripts/build.mjs', '--only', 'console', '--quiet'], { cwd: ROOT, stdio: 'inherit' });
    const dist = join(ROOT, 'services/console/dist');
    const html = readFileSync(join(dist, 'index.html'), 'utf8');
    const files = [...html.matchAll(/<script[^>]+src="([^"]+\.js)"|<link[^>]+rel="modulepreload"[^>]+href="([^"]+\.js)"/g)].map((m) => m[1] ?? m[2]);
    expect(files.length).toBeGreaterThan(0);
    const gz = files.reduce((sum, f) => sum + gzipSync(readFileSync(join(dist, f))).length, 0);
    console.log(`[agp tests] console initial JS: ${files.join(', ')}: ${(gz / 1024).toFixed(1)} KiB gzipped`);
    expect(gz).toBeLessThan(300 * 1000);
  });
});

// Enrichment on, against the loopback chat-completions fake, so a record shows enriched fields beside the originals.
let fake: FakeLlm | undefined;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake?.close();
});

describeConsole(
  'the console in Chromium (overview, interventions, approvals, policies, runs)',
  (ctx) => {
    it('refuses a wrong key at sign-in with the problem title and detail, and a 401 later returns to sign-in', T, async () => {
      const page = await ctx().open('/', { key: 'agp_not_a_real_key_000000' });
      await page.getByText('That key was not accepted').waitFor();
      const problem = page.locator('.sign-in-error .problem');
      await expect.poll(() => problem.textContent()).toContain('Unauthorized');
      expect(await problem.textContent()).toContain('unknown, revoked or expired API key');
      await ctx().expectAccessible(page, 'sign-in error');
      await ctx().screenshot(page, 'sign-in-wrong-key');

      // Signed in, then the key stops working (here: replaced in session storage): the next call's 401 signs out.
      const ok = await ctx().open('/runs');
      await ok.evaluate("sessionStorage.setItem('agp.console.key', 'agp_revoked_key_0000000000')");
      await ok.reload();
      await ok.getByText('Your session ended').waitFor();
      expect(await ok.getByLabel('API key').count()).toBe(1);
      await ok.getByRole('heading', { name: 'Sign in to the AGP console' }).waitFor();
    });

    it('signs in with GET /api/v1/auth/key (no write probe, no 4xx in devtools) and shows the key’s name and scope', T, async () => {
      const page = await ctx().open('/', { key: null });
      const requests: string[] = [];
      const refused: string[] = [];
      page.on('request', (r) => void requests.push(`${r.method()} ${new URL(r.url()).pathname}`));
      page.on('response', (r) => void (r.status() >= 400 && refused.push(`${r.status()} ${r.url()}`)));
      await page.getByLabel('API key').fill(ctx().platform.readKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('nav[aria-label="Console"]').waitFor();
      await expect.poll(() => page.locator('.key-name').textContent()).toBe('AGP_INIT_READ_KEY');
      expect(await page.locator('.scope-badge').textContent()).toBe('read-only key');
      expect(requests).toContain('GET /api/v1/auth/key');
      expect(requests.filter((r) => r.includes('apr-console-scope-probe') || r.startsWith('POST '))).toEqual([]);
      expect(refused).toEqual([]);

      const admin = await ctx().open('/', { key: ctx().platform.adminKey });
      await expect.poll(() => admin.locator('.scope-badge').textContent()).toBe('admin key');
      expect(await admin.locator('.key-name').textContent()).toBe('test admin key');
      await ctx().expectAccessible(admin, 'header with the key name and scope');
    });

    it('shows the overview with the dashboard numbers, the 30-day chart and interventions by type', T, async () => {
      const dash = (await ctx().api('GET', `/api/v1/mcp/resources/${encodeURIComponent('platform://stats/dashboard')}`)).body.data;
      for (const viewport of [undefined, PHONE]) {
        const page = await ctx().open('/', { viewport });
        await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
        await expect.poll(() => page.locator('[data-card="Runs"]').textContent()).toBe(dash.total_runs.toLocaleString('en-US'));
        expect(await page.locator('[data-card="Actions"]').textContent()).toBe(dash.total_actions.toLocaleString('en-US'));
        expect(await page.locator('[data-card="Pending approvals"]').textContent()).toBe(String(dash.pending_approvals));
        await page.locator('#daily-heading ~ .chart canvas').first().waitFor();
        await page.locator('#by-type-heading ~ .chart canvas').first().waitFor();
        expect(await page.getByRole('table', { name: 'Interventions by type, last 30 days' }).locator('tbody tr').count()).toBeGreaterThan(1);
        expect(await horizontalOverflow(page)).toBe(0);
        await ctx().expectAccessible(page, 'overview');
        await ctx().screenshot(page, viewport ? 'overview-390' : 'overview-1280');
      }
    });

    it('lists interventions; a filter changes the URL and the rows; the detail shows context, inputs and the audit trail', T, async () => {
      const page = await ctx().open('/interventions');
      await page.getByTestId('result-count').waitFor();
      const all = (await ctx().api('GET', '/api/v1/interventions?limit=1')).body.total as number;
      expect(await page.getByTestId('result-count').textContent()).toBe(`${all.toLocaleString('en-US')} interventions`);
      await page.getByLabel('Type').selectOption('approval_required');
      await page.waitForURL(/type=approval_required/);
      const filtered = (await ctx().api('GET', '/api/v1/interventions?type=approval_required&limit=1')).body.total as number;
      expect(filtered).toBeLessThan(all);
      await expect.poll(() => page.getByTestId('result-count').textContent()).toBe(`${filtered.toLocaleString('en-US')} interventions`);
      const types = await page.locator('table.data-table tbody tr td:nth-child(2)').allTextContents();
      expect(types.length).toBe(Math.min(50, filtered));
      expect(new Set(types)).toEqual(new Set(['approval required']));
      await page.getByLabel('Risk level').selectOption('high');
      await page.waitForURL(/risk_level=high/);
      expect(page.url()).toContain('type=approval_required');
      await ctx().expectAccessible(page, 'interventions');
      await ctx().screenshot(page, 'interventions-filtered');

      await page.locator('table.data-table tbody tr a').first().click();
      await page.getByRole('heading', { name: /^Intervention: / }).waitFor();
      await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
      expect(await page.getByRole('list', { name: 'Audit trail' }).locator('li').count()).toBeGreaterThan(0);
      await page.getByRole('heading', { name: 'Original inputs' }).waitFor();
      await page.getByRole('heading', { name: 'Explanation, enriched and original' }).waitFor();
      await ctx().expectAccessible(page, 'intervention detail');

      // An enriched record: the model's plain-English reason beside the original one.
      const one = (await ctx().api('GET', '/api/v1/interventions?type=hard_block&limit=1')).body.interventions[0];
      const enriched = await eventually(async () => {
        const r = (await ctx().api('GET', `/api/v1/interventions/${encodeURIComponent(one.id)}`)).body;
        return r.enrichment_status === 'enriched' ? r : null;
      }, 30_000);
      const original = enriched.audit_trail.find((e: { event: string }) => e.event === 'InterventionEnriched').changes.reason.from as string;
      await page.goto(`/interventions/${encodeURIComponent(one.id)}`);
      const reasonRow = page.getByRole('table', { name: 'Enriched fields next to their originals' }).getByRole('row', { name: /^reason/ });
      await reasonRow.waitFor();
      expect(await reasonRow.locator('td').nth(0).textContent()).toBe(DEFAULT_ANSWER.reason);
      expect(await reasonRow.locator('td').nth(1).textContent()).toBe(original);
      await ctx().screenshot(page, 'intervention-detail');

      // A guardrail intervention shows its context.
      const pii = (await ctx().api('GET', '/api/v1/interventions?type=pii_blocked&limit=1')).body.interventions[0];
      if (pii) {
        await page.goto(`/interventions/${encodeURIComponent(pii.id)}`);
        await page.getByRole('heading', { name: /^Guardrail context/ }).waitFor();
      }
    });

    it('renders a 10 kB field and stored HTML/script payloads as text: no sideways overflow at 390 px, nothing executes', T, async () => {
      // 10 kB values (the API's limit for these text fields is 10,000 characters): words, then one unbroken run.
      const long = `${'A very long reason '.repeat(20)}${'x'.repeat(9_400)}`;
      const created = await ctx().api('POST', '/api/v1/interventions', {
        body: {
          type: 'approval_required',
          outcome: 'escalated',
          action_name: 'xss_probe',
          agent_id: 'agent-xss',
          description: `${XSS} ${long}`,
          reason: `${XSS} blocked because ${long}`,
          agent_intent: XSS,
          blast_radius: XSS,
          // Stored as jsonb, whose keys come back shortest first, then alphabetically: `html` before `long`.
          original_inputs: { html: XSS, long, nested: { again: XSS } },
        },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.id as string;
      for (const path of [`/interventions/${encodeURIComponent(id)}`, '/interventions?agent_id=agent-xss', '/approvals?agent_id=agent-xss']) {
        const page = await ctx().open(path, { viewport: PHONE });
        await page.getByText('agent-xss').first().waitFor();
        if (path.startsWith('/approvals')) await page.locator('button.row-toggle').first().click(); // the inputs are in the row's details
        // The list shows the reason, which enrichment may have rewritten by now; the detail and the approval's details show
        // the original inputs, which hold the payload whatever enrichment did.
        if (!path.startsWith('/interventions?')) expect(await page.getByText('<img src=x onerror=', { exact: false }).count(), path).toBeGreaterThan(0);
        expect(await horizontalOverflow(page), path).toBe(0);
        expect(await page.locator('img[src="x"]').count(), path).toBe(0);
        expect(await xssRan(page), path).toBe(false);
        await ctx().screenshot(page, `bad-input-390-${path.split('?')[0].split('/')[1]}`);
      }
      const wide = await ctx().open(`/interventions/${encodeURIComponent(id)}`);
      await wide.getByText('Show all', { exact: false }).first().click();
      expect(await horizontalOverflow(wide)).toBe(0);
      expect(await xssRan(wide)).toBe(false);
      await ctx().expectAccessible(wide, 'intervention with long and HTML fields');
      await ctx().screenshot(wide, 'bad-input-1280-detail');
      expect(ctx().pageErrors).toEqual([]);
    });

    it('shows problems with their title and detail: an unknown id (404), a bad filter (422), a server error (503)', T, async () => {
      const page = await ctx().open('/interventions/no-such-intervention');
      const problem = page.locator('.problem');
      await problem.waitFor();
      const api = (await ctx().api('GET', '/api/v1/interventions/no-such-intervention')).body;
      expect(await problem.textContent()).toContain(api.title);
      expect(await problem.textContent()).toContain(api.detail);
      await ctx().screenshot(page, 'problem-404');

      await page.goto('/runs?min_cost=-1');
      await page.locator('.problem').waitFor();
      const bad = (await ctx().api('GET', '/api/v1/runs?min_cost=-1')).body;
      expect(bad.title).toBe('Unprocessable Content');
      expect(await page.locator('.problem').textContent()).toContain(bad.title);
      expect(await page.locator('.problem').textContent()).toContain('query.min_cost');
      await ctx().screenshot(page, 'problem-422');

      // A dependency down: the gateway's 503 problem, injected for this one request (the platform itself is healthy).
      await page.route('**/api/v1/kill-switches', (route) =>
        route.fulfill({ status: 503, contentType: 'application/problem+json', body: JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'the policies service did not answer; retry' }) }),
      );
      await page.goto('/policies');
      await page.getByText('the policies service did not answer; retry').waitFor();
      expect(await page.locator('.problem').first().textContent()).toContain('Service Unavailable');
      await page.getByRole('table', { name: 'Policies' }).waitFor(); // the rest of the page still works
      await ctx().screenshot(page, 'problem-503');
    });

    it('approves a pending approval with notes (the record changes), shows a 409 as a message, and a read key cannot approve', T, async () => {
      const pending = (await ctx().api('GET', '/api/v1/approvals?status=pending&limit=1000')).body.approvals.filter((a: { agent_id: string }) => a.agent_id !== 'agent-xss');
      expect(pending.length).toBeGreaterThan(3);

      const reader = await ctx().open('/approvals');
      await reader.getByRole('table', { name: 'Approvals' }).waitFor();
      const readApprove = reader.getByRole('button', { name: 'Approve' }).first();
      expect(await readApprove.isDisabled()).toBe(true);
      expect(await readApprove.getAttribute('title')).toMatch(/read key/);
      expect(await readApprove.getAttribute('aria-describedby')).toBe('read-only-reason');
      await ctx().expectAccessible(reader, 'approvals (read key)');
      await ctx().screenshot(reader, 'approvals-read-key');

      const page = await ctx().open(`/approvals?agent_id=${encodeURIComponent(pending[0].agent_id)}`, { key: ctx().platform.writeKey });
      // One click on the row, then the confirmation asks the approver's email and notes.
      const row = page.locator(`tr[data-row-id="${pending[0].id}"]`);
      await row.getByRole('button', { name: 'Approve' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Approver email').fill('reviewer@example.com');
      await dialog.getByLabel('Notes').fill('checked the invoice <b>by hand</b>');
      await ctx().expectAccessible(page, 'approval confirmation');
      await dialog.getByRole('button', { name: 'Approve', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'approved by reviewer@example.com' }).waitFor();
      const after = (await ctx().api('GET', `/api/v1/approvals/${encodeURIComponent(pending[0].id)}`)).body;
      expect(after).toMatchObject({ status: 'approved', approver_email: 'reviewer@example.com', notes: 'checked the invoice <b>by hand</b>', actor: expect.stringMatching(/^key:/), actor_name: 'AGP_INIT_WRITE_KEY' });
      // The decided approval names the key that decided, beside its id.
      await page.goto(`/approvals?status=approved&agent_id=${encodeURIComponent(pending[0].agent_id)}`);
      await page.locator(`tr[data-row-id="${pending[0].id}"] button.row-toggle`).click();
      await page.locator(`tr[data-detail-of="${pending[0].id}"] .actor-name`).filter({ hasText: 'AGP_INIT_WRITE_KEY' }).waitFor();
      expect((await ctx().api('GET', `/api/v1/interventions/${encodeURIComponent(pending[0].intervention_id)}`)).body.outcome).toBe('approved_after_review');
      await ctx().screenshot(page, 'approvals-approved');

      // Rejecting works the same way.
      const third = pending[2];
      const page3 = await ctx().open(`/approvals?agent_id=${encodeURIComponent(third.agent_id)}`, { key: ctx().platform.writeKey });
      await page3.locator(`tr[data-row-id="${third.id}"]`).getByRole('button', { name: 'Reject' }).click();
      const dialog3 = page3.getByRole('dialog');
      await dialog3.getByRole('button', { name: 'Reject', exact: true }).click(); // no email yet: said next to the field, nothing sent
      await dialog3.getByText('Enter the approver email').waitFor();
      expect(await dialog3.getByLabel('Approver email').getAttribute('aria-invalid')).toBe('true');
      expect((await ctx().api('GET', `/api/v1/approvals/${encodeURIComponent(third.id)}`)).body.status).toBe('pending');
      await dialog3.getByLabel('Approver email').fill('reviewer@example.com');
      await dialog3.getByRole('button', { name: 'Reject', exact: true }).click();
      await page3.getByRole('status').filter({ hasText: 'rejected by reviewer@example.com' }).waitFor();
      expect((await ctx().api('GET', `/api/v1/approvals/${encodeURIComponent(third.id)}`)).body).toMatchObject({ status: 'rejected', approver_email: 'reviewer@example.com', notes: null });

      // Decided elsewhere while the page shows it pending: the 409 is a message, and the list refreshes.
      const other = pending[1];
      const page2 = await ctx().open(`/approvals?agent_id=${encodeURIComponent(other.agent_id)}`, { key: ctx().platform.writeKey });
      const row2 = page2.locator(`tr[data-row-id="${other.id}"]`);
      await row2.waitFor();
      expect((await ctx().api('POST', `/api/v1/approvals/${encodeURIComponent(other.id)}/reject`, { body: { approver_email: 'someone@example.com' } })).status).toBe(200);
      await row2.getByRole('button', { name: 'Approve' }).click();
      await page2.getByRole('dialog').getByLabel('Approver email').fill('late@example.com');
      await page2.getByRole('dialog').getByRole('button', { name: 'Approve', exact: true }).click();
      const conflict = page2.locator('.problem').filter({ hasText: 'already decided' });
      await conflict.waitFor();
      expect(await conflict.textContent()).toContain('Conflict');
      await expect.poll(() => row2.count()).toBe(0);
      expect((await ctx().api('GET', `/api/v1/approvals/${encodeURIComponent(other.id)}`)).body.status).toBe('rejected');
      await ctx().expectAccessible(page2, 'approvals after a 409');
      await ctx().screenshot(page2, 'approvals-409');
      expect(await horizontalOverflow(page2)).toBe(0);
    });

    it('shows "1 of 2 approvals" and the approvers of an approval needing two, and the second approval decides it', T, async () => {
      const agent = 'agent-two-approvers';
      const rec = await ctx().api('POST', '/api/v1/interventions', { body: { type: 'approval_required', outcome: 'escalated', action_name: 'wire_transfer', agent_id: agent, approvals_required: 2, reason: 'two approvers' } });
      expect(rec.status).toBe(201);
      const id = `apr-${rec.body.id}`;
      await eventually(async () => (await ctx().api('GET', `/api/v1/approvals/${id}`)).status === 200, 30_000);
      const first = await ctx().api('POST', `/api/v1/approvals/${id}/approve`, { key: ctx().platform.adminKey, body: { approver_email: 'first@example.com', notes: 'looks right' } });
      expect(first.body).toMatchObject({ status: 'pending', approvals: [{ by: { type: 'key', email: 'first@example.com' }, comment: 'looks right' }] });
      const page = await ctx().open(`/approvals?agent_id=${agent}`, { key: ctx().platform.writeKey });
      const row = page.locator(`tr[data-row-id="${id}"]`);
      await row.getByText('1 of 2 approvals').waitFor();
      await row.locator('button.row-toggle').click();
      const detail = page.locator(`tr[data-detail-of="${id}"]`);
      await detail.locator('ol.approvers li').filter({ hasText: 'first@example.com' }).filter({ hasText: 'looks right' }).waitFor();
      await ctx().expectAccessible(page, 'approval needing two approvals');
      await row.getByRole('button', { name: 'Approve' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Approver email').fill('second@example.com');
      await dialog.getByRole('button', { name: 'Approve', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'approved by second@example.com' }).waitFor();
      const after = (await ctx().api('GET', `/api/v1/approvals/${id}`)).body;
      expect(after).toMatchObject({ status: 'approved', decided_by: { type: 'key', email: 'second@example.com', name: 'AGP_INIT_WRITE_KEY' } });
      expect(after.approvals.map((g: { by: { email: string } }) => g.by.email)).toEqual(['first@example.com', 'second@example.com']);
      await ctx().screenshot(page, 'approvals-two-approvers');
    });

    it('keeps an inbox of 20 pending approvals a screen high: one line a row, the details on demand', T, async () => {
      const agent = 'agent-inbox';
      for (let i = 0; i < 20; i++) {
        const r = await ctx().api('POST', '/api/v1/interventions', {
          body: { type: 'approval_required', outcome: 'escalated', action_name: `wire_transfer_${i}`, agent_id: agent, reason: `transfer ${i} of ${'a large amount '.repeat(10)}needs a human`, agent_intent: `pay invoice ${i}`, original_inputs: { amount: 1000 + i, iban: 'DE89370400440532013000', memo: 'x'.repeat(300) } },
        });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
      }
      await eventually(async () => (await ctx().api('GET', `/api/v1/approvals?status=pending&agent_id=${agent}&limit=1`)).body?.total === 20, 30_000);

      const page = await ctx().open(`/approvals?agent_id=${agent}`, { key: ctx().platform.writeKey });
      const rows = page.locator('tr[data-row-id]');
      await expect.poll(() => rows.count()).toBe(20);
      // As cards, 19 made a 12,000 px page; as rows the whole inbox fits a 1280×900 screen and a bit.
      const height = Number(await page.evaluate('document.documentElement.scrollHeight'));
      expect(height).toBeLessThan(1400);
      for (const h of await rows.evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().height))) expect(h).toBeLessThan(40);
      expect(await page.getByText('pay invoice 3', { exact: true }).count()).toBe(0); // details are not drawn until asked for
      await ctx().screenshot(page, 'approvals-inbox-20');

      // One row's details open under it (and close again); approve stays one click and a confirmation.
      const first = (await ctx().api('GET', `/api/v1/approvals?status=pending&agent_id=${agent}&limit=1`)).body.approvals[0];
      const toggle = page.locator(`tr[data-row-id="${first.id}"] button.row-toggle`);
      expect(await toggle.getAttribute('aria-expanded')).toBe('false');
      await toggle.click();
      const detail = page.locator(`[id="${await toggle.getAttribute('aria-controls')}"]`);
      await detail.getByText(first.agent_intent, { exact: true }).waitFor();
      expect(await toggle.getAttribute('aria-expanded')).toBe('true');
      expect(await detail.textContent()).toContain('DE89370400440532013000');
      await ctx().expectAccessible(page, 'approvals inbox with a row open');
      await detail.getByRole('button', { name: `Approve ${first.action_name}` }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      expect((await ctx().api('GET', `/api/v1/approvals/${encodeURIComponent(first.id)}`)).body.status).toBe('pending');
      await toggle.click();
      await expect.poll(() => detail.count()).toBe(0);

      // On a phone the rows stay one line too, and the page never scrolls sideways.
      const phone = await ctx().open(`/approvals?agent_id=${agent}`, { viewport: PHONE });
      const phoneRows = phone.locator('tr[data-row-id]');
      await expect.poll(() => phoneRows.count()).toBe(20);
      for (const h of await phoneRows.evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().height))) expect(h).toBeLessThan(40);
      expect(await horizontalOverflow(phone)).toBe(0);
      await ctx().screenshot(phone, 'approvals-inbox-390');
    });

    it('lists policies with their version history as a diff, and engages a kill switch only after confirming', T, async () => {
      const policies = (await ctx().api('GET', '/api/v1/policies?limit=100')).body.policies as Array<{ id: string; name: string; version: number }>;
      // Give one policy a second version (a period budget among its changes) so the history has a change to diff.
      const p = policies[0];
      expect((await ctx().api('PATCH', `/api/v1/policies/${p.id}`, { body: { run_budget: 123.45, description: 'raised by the console test', period_budgets: [{ scope: 'organization', period: 'month', max_usd: 5000 }] } })).status).toBe(200);

      const reader = await ctx().open('/policies');
      await reader.getByRole('table', { name: 'Policies' }).waitFor();
      expect(await reader.getByRole('table', { name: 'Policies' }).locator('tbody tr').count()).toBe(policies.length);
      expect(await reader.getByRole('table', { name: 'Policies' }).locator('tbody tr', { has: reader.locator(`a[href="/policies/${p.id}"]`) }).textContent()).toContain('$5,000.00 per UTC month for the organisation');
      // At 1280 px every column fits: the table does not scroll sideways, and "Needs approval" is whole inside its box.
      const box = reader.locator('.table-scroll', { has: reader.getByRole('table', { name: 'Policies' }) });
      expect(await box.evaluate((el) => el.scrollWidth - el.clientWidth)).toBe(0);
      const boxRect = (await box.boundingBox())!;
      for (const header of ['Period budgets', 'Needs approval', 'Agents', 'Updated']) {
        const th = (await reader.getByRole('columnheader', { name: header, exact: true }).boundingBox())!;
        expect(th.x + th.width, header).toBeLessThanOrEqual(boxRect.x + boxRect.width + 0.5);
      }
      const approvalColumn = (await reader.getByRole('table', { name: 'Policies' }).locator('thead th').allTextContents()).indexOf('Needs approval') + 1;
      expect(approvalColumn).toBeGreaterThan(0);
      for (const cell of await reader.getByRole('table', { name: 'Policies' }).locator(`tbody td:nth-child(${approvalColumn})`).all()) {
        expect(await cell.evaluate((el) => el.scrollWidth - el.clientWidth)).toBe(0); // its names wrap, never cut
      }
      expect(await reader.getByRole('button', { name: 'Engage the organisation kill switch' }).isDisabled()).toBe(true);
      await reader.getByLabel('Enabled').selectOption('false');
      await reader.waitForURL(/enabled=false/);
      await reader.getByText('No policies match.').waitFor();
      await ctx().expectAccessible(reader, 'policies');

      await reader.goto(`/policies/${p.id}`);
      await reader.getByRole('heading', { name: `Policy: ${p.name}` }).waitFor();
      const diff = reader.getByRole('table', { name: `Version ${p.version} compared with version ${p.version + 1}` });
      await diff.waitFor();
      expect(await diff.locator('tr[data-changed="yes"] th').allTextContents()).toEqual(['Description (changed)', 'Run budget (changed)', 'Period budgets (changed)']);
      expect(await reader.getByRole('list', { name: 'Policy history' }).locator(':scope > li').count()).toBe(p.version + 1);
      // The change made with the write key shows the key's name beside its id.
      expect(await reader.getByRole('list', { name: 'Policy history' }).locator(':scope > li').last().locator('.actor-name').textContent()).toBe('AGP_INIT_WRITE_KEY');
      await ctx().expectAccessible(reader, 'policy detail');
      await ctx().screenshot(reader, 'policy-history');

      const writer = await ctx().open('/policies', { key: ctx().platform.writeKey });
      await writer.getByRole('button', { name: 'Engage the organisation kill switch' }).click();
      const dialog = writer.getByRole('dialog');
      await dialog.waitFor();
      await dialog.getByLabel('Reason (recorded on the change)').fill('console test');
      await ctx().screenshot(writer, 'kill-switch-confirm');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect((await ctx().api('GET', '/api/v1/kill-switches')).body.organization.engaged).toBe(false);

      await writer.getByRole('button', { name: 'Engage the organisation kill switch' }).click();
      await dialog.getByLabel('Reason (recorded on the change)').fill('console test');
      await dialog.getByRole('button', { name: 'Engage kill switch' }).click();
      await writer.getByRole('button', { name: 'Release the organisation kill switch' }).waitFor();
      expect((await ctx().api('GET', '/api/v1/kill-switches')).body.organization).toMatchObject({ engaged: true, reason: 'console test', actor_name: 'AGP_INIT_WRITE_KEY' });
      await writer.locator('.actor-name').filter({ hasText: 'AGP_INIT_WRITE_KEY' }).first().waitFor();
      await writer.getByRole('button', { name: 'Release the organisation kill switch' }).click();
      await dialog.getByRole('button', { name: 'Release kill switch' }).click();
      await writer.getByRole('button', { name: 'Engage the organisation kill switch' }).waitFor();
      expect((await ctx().api('GET', '/api/v1/kill-switches')).body.organization.engaged).toBe(false);
    });

    it('lists runs with filters, opens a run ledger, and shows the estimation-accuracy histograms', T, async () => {
      const page = await ctx().open('/runs');
      await page.getByTestId('result-count').waitFor();
      const completed = (await ctx().api('GET', '/api/v1/runs?status=completed&limit=1')).body.total as number;
      await page.getByLabel('Status').selectOption('completed');
      await page.waitForURL(/status=completed/);
      await expect.poll(() => page.getByTestId('result-count').textContent()).toBe(`${completed.toLocaleString('en-US')} runs`);
      const runsTable = page.getByRole('table', { name: 'Runs', exact: true });
      expect(new Set(await runsTable.locator('tbody tr td:nth-child(4)').allTextContents())).toEqual(new Set(['completed']));
      await page.getByLabel('Minimum cost (USD)').fill('1000000');
      await page.getByLabel('Minimum cost (USD)').press('Enter');
      await page.waitForURL(/min_cost=1000000/);
      await page.getByText('No runs match these filters.').waitFor();
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await expect.poll(() => new URL(page.url()).search).toBe('');
      await page.getByRole('heading', { name: 'Estimation accuracy' }).waitFor();
      const acc = (await ctx().api('GET', '/api/v1/stats/estimation-accuracy')).body;
      if (acc.actions_compared > 0) expect(await page.locator('figure.histogram').count()).toBe(acc.histograms.length);
      await ctx().expectAccessible(page, 'runs');
      await ctx().screenshot(page, 'runs');

      const run = (await ctx().api('GET', '/api/v1/runs?limit=50')).body.runs.find((r: { action_count: number }) => r.action_count > 0);
      await runsTable.getByRole('link', { name: run.id, exact: true }).click();
      await page.getByRole('heading', { name: `Run ${run.id}` }).waitFor();
      const ledger = page.getByRole('table', { name: `Actions of run ${run.id}` });
      await ledger.waitFor();
      expect(await ledger.locator('tbody tr').count()).toBe(Math.min(100, run.action_count));
      await ctx().expectAccessible(page, 'run detail');
      await ctx().screenshot(page, 'run-ledger');
    });

    it('draws a run ledger on a phone one line a row, its inputs and outputs in full on demand and in view', T, async () => {
      const run = (await ctx().api('GET', '/api/v1/runs?limit=100')).body.runs.find((r: { action_count: number }) => r.action_count >= 3);
      const detail = (await ctx().api('GET', `/api/v1/runs/${encodeURIComponent(run.id)}`)).body;
      const page = await ctx().open(`/runs/${encodeURIComponent(run.id)}`, { viewport: PHONE });
      const ledger = page.getByRole('table', { name: `Actions of run ${run.id}` });
      await ledger.waitFor();
      const rows = ledger.locator('tr[data-row-id]');
      expect(await rows.count()).toBe(Math.min(100, run.action_count));
      // Inputs and outputs drawn in full made each row hundreds of pixels of blank space; a row is one line now.
      for (const h of await rows.evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().height))) expect(h).toBeLessThan(40);
      const entry = detail.actions[0];
      await ledger.locator(`tr[data-row-id="${entry.id}"] button.row-toggle`).click();
      const open = ledger.locator(`tr[data-detail-of="${entry.id}"]`);
      await open.waitFor();
      const inputs = open.locator('pre').first();
      expect(JSON.parse((await inputs.textContent())!)).toEqual(entry.inputs);
      const box = (await inputs.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width); // pinned in view though the table scrolls sideways
      expect(await horizontalOverflow(page)).toBe(0);
      await ctx().expectAccessible(page, 'run ledger at 390 px with a row open');
      await ctx().screenshot(page, 'run-ledger-390');
    });

    it('lays out every page at 390 px without sideways overflow, with the navigation to all twelve pages', T, async () => {
      const page = await ctx().open('/', { viewport: PHONE });
      const nav = page.getByRole('navigation', { name: 'Console' });
      expect(await nav.getByRole('link').allTextContents()).toEqual(['Overview', 'Interventions', 'Approvals', 'Policies', 'Runs', 'Evals', 'Benchmarks', 'Tool gateway', 'Replay', 'Audit log', 'Audit trail', 'Webhooks']);
      const run = (await ctx().api('GET', '/api/v1/runs?limit=1')).body.runs[0];
      for (const path of ['/', '/interventions', '/approvals', '/policies', '/runs', `/runs/${encodeURIComponent(run.id)}`]) {
        await page.goto(path);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await settled(page);
        expect(await horizontalOverflow(page), path).toBe(0);
      }
      await ctx().screenshot(page, 'run-390');
      expect(ctx().pageErrors).toEqual([]);
    });
  },
  { boot: () => ({ env: { AGP_LLM_API_KEY: 'test-key', AGP_LLM_BASE_URL: fake!.url, AGP_LLM_MODEL: 'fake-model' } }) },
);
