import { expect, it } from 'vitest';
import { join } from 'node:path';
import { ARTIFACTS_DIR, describeConsole } from './support.js';

/**
 * The policy form in Chromium against the embedded platform: a policy created with an action budget, a downgrade
 * rule and a PII guardrail through the form, shown on its detail page as sentences, edited (action budget raised,
 * moderation added), the change seen in the version history; and a bad value (moderation threshold 2) answered by
 * the API's 422 with the field's message shown next to that input, nothing written.
 */

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
      expect(await page.getByTestId('action-budget').textContent()).toBe('$5.00 per action');
      expect(await page.getByRole('list', { name: 'Downgrade rules' }).locator('li').allTextContents()).toEqual(['refund_payment: amount capped at 100']);
      expect(await page.getByRole('list', { name: 'Guardrails' }).locator('li').allTextContents()).toEqual(['PII redact: email, payment card']);
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
      await expect.poll(() => page.getByTestId('action-budget').textContent()).toBe('$7.50 per action');
      expect(await page.getByRole('list', { name: 'Guardrails' }).locator('li').allTextContents()).toEqual(['PII redact: email, payment card', 'Moderation block at a score of 0.8 or more: all categories']);
      const updated = (await ctx().api('GET', `/api/v1/policies/${created.id}`)).body;
      expect(updated).toMatchObject({ version: 2, action_budget: 7.5, downgrades: created.downgrades, guardrails: { pii: created.guardrails.pii, moderation: { mode: 'block', threshold: 0.8 } } });
      const changes = page.getByRole('table', { name: 'Changes of version 2' });
      await changes.waitFor();
      expect((await changes.locator('tbody th').allTextContents()).sort()).toEqual(['action budget', 'guardrails']);
      expect(await changes.locator('tbody tr', { has: page.locator('th', { hasText: 'action budget' }) }).locator('td').allTextContents()).toEqual(['5', '7.5']);
      expect(await changes.locator('tbody tr', { has: page.locator('th', { hasText: 'guardrails' }) }).locator('td').nth(1).textContent()).toContain('"threshold": 0.8');
      const diff = page.getByRole('table', { name: 'Version 1 compared with version 2' });
      expect(await diff.locator('tr[data-changed="yes"] th').allTextContents()).toEqual(['action budget (changed)', 'guardrails (changed)']);
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
      await expect.poll(() => page.getByRole('list', { name: 'Downgrade rules' }).locator('li').allTextContents()).toEqual(['refund_payment: amount capped at 80', 'every action: model gpt-4 → gpt-4o-mini, gpt-4o → gpt-4o-mini'] /* the stored order (jsonb: shorter keys first) */);
      expect(ctx().pageErrors).toEqual([]);
    });
  },
  { simulate: ['--agents', '1', '--rate', '200', '--duration', '0.2', '--batch-size', '50', '--quiet'] },
);
