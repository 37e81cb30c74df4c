import { expect, it } from 'vitest';
import { join } from 'node:path';
import { ARTIFACTS_DIR, describeConsole, type ConsoleContext } from './support.js';

/**
 * The policy form in Chromium against the embedded platform: a policy created with an action budget, a downgrade
 * rule and a PII guardrail through the form, shown on its detail page as sentences, edited (action budget raised,
 * moderation added), the change seen in the version history; and a bad value (moderation threshold 2) answered by
 * the API's 422 with the field's message shown next to that input, nothing written. A second policy is authored with
 * an agent scope, denied, allowed and approval-required actions and rate limits, and the policy engine
 * (`POST /api/v1/policies/evaluate`) then blocks, escalates and scopes actions by name as it says. A third is
 * authored with rate-limit scopes and period budgets: a repeated (scope, period) pair is answered by the API's 422 next
 * to that row, the budgets are kept by an edit of another field and diffed in words when changed, and the policy's
 * fleet counters panel shows what `GET /api/v1/quotas` answers for it.
 */

/** The decision of the platform's policy engine on `action` by `agent` (through the API, as an SDK would ask). */
async function decide(ctx: () => ConsoleContext, agent: string, action: string): Promise<{ decision: string; rule: string | null; policy_id: string | null; triggered: Array<{ policy_id: string | null; rule: string }> }> {
  const r = await ctx().api('POST', '/api/v1/policies/evaluate', { body: { agent_id: agent, action_name: action } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

const T = { timeout: 240_000 };

describeConsole(
  'the policy form in Chromium (action budget, downgrades, guardrails)',
  (ctx) => {
    it('creates a policy with an action budget, a downgrade and a PII guardrail, shows them, edits one, and shows the 422 field error of a bad threshold', T, async () => {
      const reader = await ctx().open('/policies');
      expect(await reader.getByRole('button', { name: 'New policy' }).isDisabled()).toBe(true); // a read key cannot write

      const page = await ctx().open('/policies', { key: ctx().platform.writeKey, viewport: { width: 1280, height: 800 } });
      await page.getByRole('button', { name: 'New policy' }).click();
      const form = page.getByRole('form', { name: 'New policy' });
      await form.getByLabel('Name', { exact: true }).fill('Console: guarded refunds');
      await form.getByLabel('Action budget', { exact: true }).fill('5');
      await form.getByRole('button', { name: 'Add a downgrade rule' }).click();
      await form.getByLabel('Rule 1: action', { exact: true }).fill('refund_payment');
      await form.getByLabel('Rule 1: argument', { exact: true }).fill('amount');
      await form.getByLabel('Rule 1: maximum', { exact: true }).fill('100');
      await form.getByLabel('Personal data (PII)').check();
      await form.getByLabel('PII mode', { exact: true }).selectOption('redact');
      const piiCats = form.getByRole('group', { name: 'PII categories' });
      await piiCats.getByLabel('all (including ones added later)').uncheck();
      await piiCats.getByLabel('email', { exact: true }).check();
      await piiCats.getByLabel('payment card', { exact: true }).check();
      await ctx().expectAccessible(page, 'new policy form');
      await form.getByRole('button', { name: 'Create policy' }).click();
      await page.getByRole('heading', { name: 'Policy: Console: guarded refunds' }).waitFor();

      // What the API stored is what the form said.
      const created = (await ctx().api('GET', `/api/v1/policies?name=${encodeURIComponent('Console: guarded refunds')}`)).body.policies[0];
      expect(created).toMatchObject({
        version: 1,
        enabled: true,
        action_budget: 5,
        run_budget: null,
        downgrades: [{ action: 'refund_payment', argument: 'amount', max: 100 }],
        guardrails: { pii: { mode: 'redact', categories: ['email', 'payment_card'] } },
      });

      // The detail shows them as sentences.
      expect(await page.getByTestId('policy-action-budget').textContent()).toBe('$5.00 per action');
      expect(await page.getByTestId('policy-downgrades').locator('li').allTextContents()).toEqual(['refund_payment: amount capped at 100']);
      expect(await page.getByTestId('policy-guardrails').locator('li').allTextContents()).toEqual(['PII: redact email, payment card']);
      await ctx().expectAccessible(page, 'policy detail with rules');

      // Edit: raise the action budget and add moderation with a threshold out of range → the API's 422 message next to the field.
      await page.getByRole('button', { name: 'Edit policy' }).click();
      const edit = page.getByRole('form', { name: 'Edit policy Console: guarded refunds' });
      await edit.getByLabel('Action budget', { exact: true }).fill('7.5');
      await edit.getByLabel('Moderation', { exact: true }).check();
      await edit.getByLabel('Moderation threshold', { exact: true }).fill('2');
      await edit.getByRole('button', { name: 'Save changes' }).click();
      const threshold = edit.getByLabel('Moderation threshold', { exact: true });
      await expect.poll(() => threshold.getAttribute('aria-invalid')).toBe('true');
      const bad = await ctx().api('PATCH', `/api/v1/policies/${created.id}`, { body: { action_budget: 7.5, guardrails: { pii: { mode: 'redact', categories: ['email', 'payment_card'] }, moderation: { mode: 'block', threshold: 2 } } } });
      expect(bad.status).toBe(422);
      const apiMessage = (bad.body.errors as Array<{ path: string; message: string }>).find((e) => e.path === 'body.guardrails.moderation.threshold')!.message;
      const errorId = (await threshold.getAttribute('aria-describedby'))!.split(' ').find((id) => id.endsWith('-error'))!;
      expect(await page.locator(`[id="${errorId}"]`).textContent()).toBe(apiMessage);
      expect(await edit.getByRole('alert').textContent()).toContain('body.guardrails.moderation.threshold');
      expect((await ctx().api('GET', `/api/v1/policies/${created.id}`)).body.version).toBe(1); // nothing written
      await ctx().expectAccessible(page, 'policy form with a field error');
      await edit.getByLabel('Moderation threshold', { exact: true }).scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ARTIFACTS_DIR, 'policy-form-edit-1280x800.png') });
      await ctx().screenshot(page, 'policy-form-edit-full');

      // Fixed and saved: version 2, the detail and the history show the change.
      await threshold.fill('0.8');
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('button', { name: 'Edit policy' }).waitFor();
      await expect.poll(() => page.getByTestId('policy-action-budget').textContent()).toBe('$7.50 per action');
      expect(await page.getByTestId('policy-guardrails').locator('li').allTextContents()).toEqual(['PII: redact email, payment card', 'Moderation: block at a score of 0.8 or more, all categories']);
      const updated = (await ctx().api('GET', `/api/v1/policies/${created.id}`)).body;
      expect(updated).toMatchObject({ version: 2, action_budget: 7.5, downgrades: created.downgrades, guardrails: { pii: created.guardrails.pii, moderation: { mode: 'block', threshold: 0.8 } } });
      const changes = page.getByRole('table', { name: 'Changes of version 2' });
      await changes.waitFor();
      // The history and the version diff say it in words, field by field, the added line marked.
      expect(await changes.locator('tbody th').allTextContents()).toEqual(['Action budget (changed)', 'Guardrails (changed)']);
      expect(await changes.locator('tr[data-field="action_budget"] td').allTextContents()).toEqual(['$5.00 per action', '$7.50 per action']);
      expect(await changes.locator('tr[data-field="guardrails"] td').nth(1).locator('li').allTextContents()).toEqual(['PII: redact email, payment card', 'Moderation: block at a score of 0.8 or more, all categories']);
      expect(await changes.locator('tr[data-field="guardrails"] td').nth(1).locator('mark').allTextContents()).toEqual(['Moderation: block at a score of 0.8 or more, all categories']);
      expect(await changes.textContent()).not.toContain('{');
      const diff = page.getByRole('table', { name: 'Version 1 compared with version 2' });
      expect(await diff.locator('tr[data-changed="yes"] th').allTextContents()).toEqual(['Action budget (changed)', 'Guardrails (changed)']);
      await ctx().screenshot(page, 'policy-form-saved');

      // A substitution of two values is two rows in the form, saved back as one rule when the list is edited.
      const multi = { action: '*', argument: 'model', replace: { 'gpt-4o': 'gpt-4o-mini', 'gpt-4': 'gpt-4o-mini' } };
      expect((await ctx().api('PATCH', `/api/v1/policies/${created.id}`, { body: { downgrades: [...created.downgrades, multi] } })).status).toBe(200);
      await page.reload();
      await page.getByRole('button', { name: 'Edit policy' }).click();
      const again = page.getByRole('form', { name: 'Edit policy Console: guarded refunds' });
      expect(await again.getByLabel('Rule 3: replaced by', { exact: true }).inputValue()).toBe('gpt-4o-mini');
      await again.getByLabel('Rule 1: maximum', { exact: true }).fill('80');
      await again.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('button', { name: 'Edit policy' }).waitFor();
      expect((await ctx().api('GET', `/api/v1/policies/${created.id}`)).body).toMatchObject({ version: 4, downgrades: [{ action: 'refund_payment', argument: 'amount', max: 80 }, multi] });
      await expect.poll(() => page.getByTestId('policy-downgrades').locator('li').allTextContents()).toEqual(['refund_payment: amount capped at 80', 'every action: model gpt-4 → gpt-4o-mini, gpt-4o → gpt-4o-mini'] /* the stored order (jsonb: shorter keys first) */);
      expect(ctx().pageErrors).toEqual([]);
    });

    it('authors an agent scope, denied, allowed and approval-required actions and rate limits through the form; the engine then applies them by name', T, async () => {
      const page = await ctx().open('/policies', { key: ctx().platform.writeKey, viewport: { width: 1280, height: 800 } });
      await page.getByRole('button', { name: 'New policy' }).click();
      const form = page.getByRole('form', { name: 'New policy' });
      await form.getByLabel('Name', { exact: true }).fill('Console: scoped actions');
      await form.getByLabel('Applies to agents', { exact: true }).fill('agent-console-a, agent-console-b');
      await form.getByLabel('Denied actions', { exact: true }).fill('wipe_disk, drop_database');
      await form.getByLabel('Actions that need approval', { exact: true }).fill('wire_transfer');
      await form.getByLabel('Allow only listed actions (an allow-list)').check();
      await form.getByLabel('Allowed actions', { exact: true }).fill('read_ticket, send_reply, wire_transfer');
      await form.getByRole('button', { name: 'Add a rate limit' }).click();
      expect(await form.getByLabel('Limit 1: action', { exact: true }).inputValue()).toBe('*');
      await form.getByLabel('Limit 1: calls', { exact: true }).fill('100');
      await form.getByLabel('Limit 1: window (s)', { exact: true }).fill('60');
      await form.getByRole('button', { name: 'Add a rate limit' }).click();

      // Two limits on one action cannot be sent (the body holds one per action): said next to the action, nothing sent.
      await form.getByLabel('Limit 2: action', { exact: true }).fill('*');
      await form.getByRole('button', { name: 'Create policy' }).click();
      const action2 = form.getByLabel('Limit 2: action', { exact: true });
      await expect.poll(() => action2.getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator(`[id="${(await action2.getAttribute('aria-describedby'))!.split(' ').find((id) => id.endsWith('-error'))}"]`).textContent()).toContain('limit 1 already names this action');

      // A limit of 0 calls: the API's 422 message next to that input, nothing written.
      await action2.fill('send_reply');
      await form.getByLabel('Limit 2: calls', { exact: true }).fill('0');
      await form.getByLabel('Limit 2: window (s)', { exact: true }).fill('3600');
      await form.getByRole('button', { name: 'Create policy' }).click();
      const calls2 = form.getByLabel('Limit 2: calls', { exact: true });
      await expect.poll(() => calls2.getAttribute('aria-invalid')).toBe('true');
      const bad = await ctx().api('POST', '/api/v1/policies', { body: { name: 'probe', rate_limits: { send_reply: { max_calls: 0, window_seconds: 3600 } } } });
      expect(bad.status).toBe(422);
      const message = (bad.body.errors as Array<{ path: string; message: string }>).find((e) => e.path === 'body.rate_limits.send_reply.max_calls')!.message;
      expect(await page.locator(`[id="${(await calls2.getAttribute('aria-describedby'))!.split(' ').find((id) => id.endsWith('-error'))}"]`).textContent()).toBe(message);
      expect(await action2.getAttribute('aria-invalid')).toBeNull();
      expect((await ctx().api('GET', `/api/v1/policies?name=${encodeURIComponent('Console: scoped actions')}`)).body.total).toBe(0);
      await ctx().expectAccessible(page, 'new policy form with a rate-limit error');

      await calls2.fill('5');
      await form.getByRole('button', { name: 'Create policy' }).click();
      await page.getByRole('heading', { name: 'Policy: Console: scoped actions' }).waitFor();
      const created = (await ctx().api('GET', `/api/v1/policies?name=${encodeURIComponent('Console: scoped actions')}`)).body.policies[0];
      expect(created).toMatchObject({
        version: 1,
        agent_ids: ['agent-console-a', 'agent-console-b'],
        denied_actions: ['wipe_disk', 'drop_database'],
        allowed_actions: ['read_ticket', 'send_reply', 'wire_transfer'],
        approval_required_actions: ['wire_transfer'],
        // A new limit counts per agent unless the form says otherwise.
        rate_limits: { '*': { max_calls: 100, window_seconds: 60, scope: 'agent' }, send_reply: { max_calls: 5, window_seconds: 3600, scope: 'agent' } },
      });

      // The engine applies it by name, to the agents it names only.
      expect(await decide(ctx, 'agent-console-a', 'wipe_disk')).toMatchObject({ decision: 'block', rule: 'denied_action', policy_id: created.id });
      expect(await decide(ctx, 'agent-console-b', 'format_everything')).toMatchObject({ decision: 'block', rule: 'not_in_allowed_actions', policy_id: created.id });
      expect(await decide(ctx, 'agent-console-a', 'wire_transfer')).toMatchObject({ decision: 'escalate', rule: 'approval_required', policy_id: created.id });
      expect((await decide(ctx, 'agent-console-a', 'read_ticket')).triggered.filter((t) => t.policy_id === created.id)).toEqual([]);
      expect((await decide(ctx, 'agent-elsewhere', 'wipe_disk')).triggered.filter((t) => t.policy_id === created.id)).toEqual([]);

      // The summary says every field in words.
      expect(await page.getByTestId('policy-agent-ids').locator('li').allTextContents()).toEqual(['agent-console-a', 'agent-console-b']);
      expect(await page.getByTestId('policy-denied-actions').locator('li').allTextContents()).toEqual(['wipe_disk', 'drop_database']);
      expect(await page.getByTestId('policy-allowed-actions').locator('li').allTextContents()).toEqual(['read_ticket', 'send_reply', 'wire_transfer']);
      expect(await page.getByTestId('policy-approval-required-actions').locator('li').allTextContents()).toEqual(['wire_transfer']);
      expect(await page.getByTestId('policy-rate-limits').locator('li').allTextContents()).toEqual(['all actions together: at most 100 calls per 60 s per agent', 'send_reply: at most 5 calls per 3600 s per agent']);
      expect(await page.getByTestId('policy-run-budget').textContent()).toBe('none');
      expect(await page.locator('.policy-rules').textContent()).not.toMatch(/[{[]/);
      await ctx().expectAccessible(page, 'policy summary with every field');

      // Edit: one action no longer denied, the shared limit lowered, the allow-list dropped; the history says so in words.
      await page.getByRole('button', { name: 'Edit policy' }).click();
      const edit = page.getByRole('form', { name: 'Edit policy Console: scoped actions' });
      expect(await edit.getByLabel('Limit 2: action', { exact: true }).inputValue()).toBe('send_reply');
      await edit.getByLabel('Denied actions', { exact: true }).fill('wipe_disk');
      await edit.getByLabel('Limit 1: calls', { exact: true }).fill('50');
      await edit.getByLabel('Allow only listed actions (an allow-list)').uncheck();
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('button', { name: 'Edit policy' }).waitFor();
      expect((await ctx().api('GET', `/api/v1/policies/${created.id}`)).body).toMatchObject({ version: 2, denied_actions: ['wipe_disk'], allowed_actions: null, rate_limits: { '*': { max_calls: 50, window_seconds: 60 }, send_reply: created.rate_limits.send_reply }, agent_ids: created.agent_ids });
      expect((await decide(ctx, 'agent-console-b', 'format_everything')).triggered.filter((t) => t.policy_id === created.id)).toEqual([]);
      const changes = page.getByRole('table', { name: 'Changes of version 2' });
      await changes.waitFor();
      expect(await changes.locator('tbody th').allTextContents()).toEqual(['Denied actions (changed)', 'Allowed actions (changed)', 'Rate limits (changed)']);
      expect(await changes.locator('tr[data-field="denied_actions"] td').first().locator('mark').allTextContents()).toEqual(['drop_database']);
      expect(await changes.locator('tr[data-field="allowed_actions"] td').nth(1).textContent()).toBe('every action that is not denied');
      expect(await changes.locator('tr[data-field="rate_limits"] td').nth(1).locator('mark').allTextContents()).toEqual(['all actions together: at most 50 calls per 60 s per agent']);
      expect(await changes.textContent()).not.toMatch(/[{[]/);
      await ctx().screenshot(page, 'policy-scoped-history');
      // docs/screenshots/console-policy.png: the summary and the comparison of the two versions.
      await page.screenshot({ path: join(ARTIFACTS_DIR, 'policy-scoped-1280.png'), fullPage: true, clip: { x: 0, y: 0, width: 1280, height: 1200 } });
      expect(ctx().pageErrors).toEqual([]);
    });

    it('authors rate-limit scopes and period budgets, shows the 422 of a repeated (scope, period), keeps them on edit and diffs them; the counters panel says what the API answers', T, async () => {
      const page = await ctx().open('/policies', { key: ctx().platform.writeKey, viewport: { width: 1280, height: 800 } });
      await page.getByRole('button', { name: 'New policy' }).click();
      const form = page.getByRole('form', { name: 'New policy' });
      await form.getByLabel('Name', { exact: true }).fill('Console: fleet limits');
      await form.getByLabel('Applies to agents', { exact: true }).fill('agent-fleet-a');
      await form.getByRole('button', { name: 'Add a rate limit' }).click();
      const scope1 = form.getByLabel('Limit 1: scope', { exact: true });
      expect(await scope1.inputValue()).toBe('agent'); // the default of a new limit
      await form.getByLabel('Limit 1: calls', { exact: true }).fill('100');
      await form.getByLabel('Limit 1: window (s)', { exact: true }).fill('60');
      await form.getByRole('button', { name: 'Add a rate limit' }).click();
      await form.getByLabel('Limit 2: action', { exact: true }).fill('send_email');
      await form.getByLabel('Limit 2: calls', { exact: true }).fill('10');
      await form.getByLabel('Limit 2: window (s)', { exact: true }).fill('3600');
      const scope2 = form.getByLabel('Limit 2: scope', { exact: true });
      await scope2.selectOption('organization');
      // The hint under the select says what the chosen scope counts together.
      expect(await page.locator(`[id="${(await scope2.getAttribute('aria-describedby'))!.split(' ').find((id) => id.endsWith('-hint'))}"]`).textContent()).toContain("all of the organisation's agents share one limit");

      // Two budgets per agent and day: the API's 422 names the second row's period, shown next to it; nothing written.
      await form.getByRole('button', { name: 'Add a period budget' }).click();
      await form.getByLabel('Period budget 1: period', { exact: true }).selectOption('day');
      await form.getByLabel('Period budget 1: max USD', { exact: true }).fill('200');
      await form.getByRole('button', { name: 'Add a period budget' }).click();
      expect(await form.getByLabel('Period budget 2: scope', { exact: true }).inputValue()).toBe('agent');
      expect(await form.getByLabel('Period budget 2: period', { exact: true }).inputValue()).toBe('hour'); // the first pair no row uses
      const period2 = form.getByLabel('Period budget 2: period', { exact: true });
      await period2.selectOption('day');
      await form.getByLabel('Period budget 2: max USD', { exact: true }).fill('50');
      await form.getByRole('button', { name: 'Create policy' }).click();
      await expect.poll(() => period2.getAttribute('aria-invalid')).toBe('true');
      const dup = await ctx().api('POST', '/api/v1/policies', { body: { name: 'probe', period_budgets: [{ scope: 'agent', period: 'day', max_usd: 200 }, { scope: 'agent', period: 'day', max_usd: 50 }] } });
      expect(dup.status).toBe(422);
      const dupMessage = (dup.body.errors as Array<{ path: string; message: string }>).find((e) => e.path === 'body.period_budgets.1.period')!.message;
      expect(await page.locator(`[id="${(await period2.getAttribute('aria-describedby'))!.split(' ').find((id) => id.endsWith('-error'))}"]`).textContent()).toBe(dupMessage);
      expect(await form.getByLabel('Period budget 1: period', { exact: true }).getAttribute('aria-invalid')).toBeNull();
      expect((await ctx().api('GET', `/api/v1/policies?name=${encodeURIComponent('Console: fleet limits')}`)).body.total).toBe(0);
      await ctx().expectAccessible(page, 'new policy form with a repeated period budget');
      await period2.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ARTIFACTS_DIR, 'policy-form-period-budgets-1280x800.png') });

      await form.getByLabel('Period budget 2: scope', { exact: true }).selectOption('organization');
      await period2.selectOption('month');
      await form.getByLabel('Period budget 2: max USD', { exact: true }).fill('5000');
      await form.getByRole('button', { name: 'Create policy' }).click();
      await page.getByRole('heading', { name: 'Policy: Console: fleet limits' }).waitFor();
      const created = (await ctx().api('GET', `/api/v1/policies?name=${encodeURIComponent('Console: fleet limits')}`)).body.policies[0];
      expect(created).toMatchObject({
        version: 1,
        rate_limits: { '*': { max_calls: 100, window_seconds: 60, scope: 'agent' }, send_email: { max_calls: 10, window_seconds: 3600, scope: 'organization' } },
        period_budgets: [
          { scope: 'agent', period: 'day', max_usd: 200 },
          { scope: 'organization', period: 'month', max_usd: 5000 },
        ],
      });
      expect(await page.getByTestId('policy-period-budgets').locator('li').allTextContents()).toEqual(['$200.00 per UTC day per agent', '$5,000.00 per UTC month for the organisation']);
      expect(await page.getByTestId('policy-rate-limits').locator('li').allTextContents()).toEqual(['all actions together: at most 100 calls per 60 s per agent', 'send_email: at most 10 calls per 3600 s for the organisation']);
      // The engine applies the budget the form wrote: an action estimated above a day's budget triggers it (other
      // policies of the organisation may trigger too: the first policy's action budget applies to every agent).
      const over = await ctx().api('POST', '/api/v1/policies/evaluate', { body: { agent_id: 'agent-fleet-a', action_name: 'fleet_probe', estimated_cost_usd: 250 } });
      expect(over.status, JSON.stringify(over.body)).toBe(200);
      expect(over.body.triggered).toContainEqual(expect.objectContaining({ policy_id: created.id, rule: 'period_budget' }));

      // The counters panel shows what GET /api/v1/quotas answers for the policy: nothing has drawn on its limits yet
      // (a decision without `reserve` changes nothing), so "no counters yet"; where the endpoint is not served, its problem.
      const panel = page.getByTestId('quota-counters');
      const counters = await ctx().api('GET', `/api/v1/quotas?policy_id=${encodeURIComponent(created.id)}`);
      if (counters.status === 200) {
        expect(counters.body.counters).toEqual([]);
        await expect.poll(() => panel.locator('.state-empty').textContent()).toContain('No counters yet');
        // A reservation through the decision API draws on the day's budget: the panel shows what is left of it.
        const reserved = await ctx().api('POST', '/api/v1/policies/evaluate', { body: { agent_id: 'agent-fleet-a', action_name: 'fleet_probe', estimated_cost_usd: 2.5, reserve: true } });
        expect(reserved.status, JSON.stringify(reserved.body)).toBe(200);
        expect(reserved.body.reservations).toEqual(expect.arrayContaining([expect.objectContaining({ policy_id: created.id, limit: 'period_budget:agent:day', scope_key: 'agent-fleet-a', amount: 2.5 })]));
        await page.reload();
        const day = page.getByTestId('quota-counters').locator('tbody tr', { hasText: 'Period budget: per UTC day per agent' });
        await day.waitFor();
        expect(await day.textContent()).toContain('agent agent-fleet-a');
        expect(await day.textContent()).toContain('$197.50 of $200.00');
        expect(await page.getByTestId('quota-counters').locator('tbody tr', { hasText: 'Period budget: per UTC month for the organisation' }).textContent()).toContain('$4,997.50 of $5,000.00');
      } else {
        await expect.poll(() => panel.getByRole('alert').textContent()).toContain(`(${counters.status})`);
      }
      await ctx().expectAccessible(page, 'policy detail with period budgets and the counters panel');
      await ctx().screenshot(page, 'policy-fleet-limits');

      // An edit of another field keeps the period budgets and scopes as they are.
      await page.getByRole('button', { name: 'Edit policy' }).click();
      let edit = page.getByRole('form', { name: 'Edit policy Console: fleet limits' });
      expect(await edit.getByLabel('Limit 2: scope', { exact: true }).inputValue()).toBe('organization');
      expect(await edit.getByLabel('Period budget 2: max USD', { exact: true }).inputValue()).toBe('5000');
      await edit.getByLabel('Limit 1: calls', { exact: true }).fill('80');
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('button', { name: 'Edit policy' }).waitFor();
      const v2 = (await ctx().api('GET', `/api/v1/policies/${created.id}`)).body;
      expect(v2).toMatchObject({ version: 2, rate_limits: { '*': { max_calls: 80, window_seconds: 60, scope: 'agent' }, send_email: created.rate_limits.send_email } });
      expect(v2.period_budgets).toEqual(created.period_budgets);
      await expect.poll(() => page.getByRole('table', { name: 'Changes of version 2' }).locator('tbody th').allTextContents()).toEqual(['Rate limits (changed)']);

      // Lower the day's budget, drop the month's and count send_email per agent: the history says it in words.
      await page.getByRole('button', { name: 'Edit policy' }).click();
      edit = page.getByRole('form', { name: 'Edit policy Console: fleet limits' });
      await edit.getByRole('button', { name: 'Remove period budget 2' }).click();
      await edit.getByLabel('Period budget 1: max USD', { exact: true }).fill('150');
      await edit.getByLabel('Limit 2: scope', { exact: true }).selectOption('agent');
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('button', { name: 'Edit policy' }).waitFor();
      expect((await ctx().api('GET', `/api/v1/policies/${created.id}`)).body).toMatchObject({ version: 3, period_budgets: [{ scope: 'agent', period: 'day', max_usd: 150 }], rate_limits: { send_email: { scope: 'agent' } } });
      const changes = page.getByRole('table', { name: 'Changes of version 3' });
      await changes.waitFor();
      expect(await changes.locator('tbody th').allTextContents()).toEqual(['Period budgets (changed)', 'Rate limits (changed)']);
      const budgets = changes.locator('tr[data-field="period_budgets"] td');
      expect(await budgets.first().locator('mark').allTextContents()).toEqual(['$200.00 per UTC day per agent', '$5,000.00 per UTC month for the organisation']);
      expect(await budgets.nth(1).textContent()).toBe('$150.00 per UTC day per agent');
      expect(await changes.locator('tr[data-field="rate_limits"] td').nth(1).locator('mark').allTextContents()).toEqual(['send_email: at most 10 calls per 3600 s per agent']);
      expect(await changes.textContent()).not.toMatch(/[{[]/);
      await ctx().screenshot(page, 'policy-fleet-limits-history');
      expect(ctx().pageErrors).toEqual([]);
    });
  },
  { simulate: ['--agents', '1', '--rate', '200', '--duration', '0.2', '--batch-size', '50', '--quiet'] },
);
