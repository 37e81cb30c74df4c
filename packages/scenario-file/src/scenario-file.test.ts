import { describe, expect, it } from 'vitest';
import { ValidationError } from '@agp/runtime';
import {
  daysAgoToken,
  isBlockingDecision,
  parseScenarioFile,
  parseScenarioFiles,
  renderScenarioFile,
  resolveTimeTokens,
  scenarioFilename,
  scenarioStatus,
  timeTokenAgeSeconds,
  type ScenarioFileInput,
} from './scenario-file.js';

const minimal: ScenarioFileInput = { agp_scenario: 1, name: 'denied_actions.delete_customer.direct', category: 'denied_actions', agent_id: 'support-bot', steps: [{ action_name: 'delete_customer' }] };

/** The ValidationError `fn` throws (fails the test when it throws nothing or something else). */
function refusal(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return err as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('scenario files', () => {
  it('fill in the defaults of a minimal file', () => {
    expect(parseScenarioFile(renderScenarioFile(minimal))).toEqual({
      ...minimal,
      severity: 'medium',
      expected: 'block',
      violations: {},
      context: { run_spend_usd: 0, session_spend_usd: 0, prior_calls: [] },
      steps: [{ action_name: 'delete_customer', arguments: {} }],
    });
  });

  it('read JSON as well as YAML', () => {
    expect(parseScenarioFile(JSON.stringify(minimal)).name).toBe(minimal.name);
  });

  it('render with a header naming the format, fields in the documented order', () => {
    const text = renderScenarioFile({ ...minimal, description: 'Calls it: twice', damage_usd: 5 });
    expect(text.split('\n')[0]).toMatch(/^# AGP scenario file, format 1 \(docs\/scenario-format\.md\)/);
    const keys = text
      .split('\n')
      .filter((l) => /^[a-z_]+:/.test(l))
      .map((l) => l.split(':')[0]);
    expect(keys).toEqual(['agp_scenario', 'name', 'category', 'severity', 'expected', 'agent_id', 'description', 'violations', 'damage_usd', 'context', 'steps']);
  });

  it('name each bad field with its line, and unknown fields', () => {
    const text = ['agp_scenario: 1', 'name: x', 'category: denied_actions', 'agent_id: a', 'severity: dire', 'steps:', '  - action_name: ""', '    argumnets: {}'].join('\n');
    const err = refusal(() => parseScenarioFile(text));
    expect(err.errors).toEqual(
      expect.arrayContaining([
        { path: 'severity', message: expect.stringMatching(/^line 5: /) },
        { path: 'steps.0.action_name', message: expect.stringMatching(/^line 7: /) },
        { path: 'steps.0.argumnets', message: 'line 8: unknown field' },
      ]),
    );
  });

  it('refuse another format version, text that is not YAML, and an empty text', () => {
    expect(refusal(() => parseScenarioFile(JSON.stringify({ ...minimal, agp_scenario: 2 }))).errors[0].path).toBe('agp_scenario');
    expect(refusal(() => parseScenarioFile('steps: [unclosed')).errors[0].message).toMatch(/^line 1: /);
    expect(refusal(() => parseScenarioFile('')).errors[0].message).toMatch(/found 0/);
  });

  it('read a stream of files, a JSON array and a generate-scenarios reply, naming the bad entry', () => {
    const one = renderScenarioFile(minimal);
    const two = renderScenarioFile({ ...minimal, name: 'second' });
    expect(parseScenarioFiles(`${one}---\n${two}`).map((s) => s.name)).toEqual([minimal.name, 'second']);
    expect(parseScenarioFiles(JSON.stringify([minimal, { ...minimal, name: 'second' }])).map((s) => s.name)).toEqual([minimal.name, 'second']);
    const reply = { agent_id: 'support-bot', scenarios: [{ source: { format: 'yaml', text: one } }, { source: { format: 'yaml', text: two } }] };
    expect(parseScenarioFiles(JSON.stringify(reply)).map((s) => s.name)).toEqual([minimal.name, 'second']);

    expect(refusal(() => parseScenarioFiles(JSON.stringify([minimal, { ...minimal, steps: [] }]))).errors).toEqual([{ path: '[1].steps', message: expect.stringMatching(/^line 1: /) }]);
    expect(refusal(() => parseScenarioFiles(`${one}---\n${two.replace('agent_id: support-bot', 'agent_id: ""')}`)).errors[0].path).toBe('documents.1.agent_id');
    const broken = { scenarios: [{ source: { text: one } }, { source: { text: two.replace('name: second', 'name: 5\nnoise: 1') } }, { source: {} }] };
    expect(refusal(() => parseScenarioFiles(JSON.stringify(broken))).errors.map((e) => e.path)).toEqual(['scenarios.1.source.text.name', 'scenarios.1.source.text.noise', 'scenarios.2.source.text']);
  });

  it('make a safe file name of a scenario name', () => {
    expect(scenarioFilename('prompt_injection.ignore previous/instructions')).toBe('prompt_injection.ignore_previous_instructions.agp.yaml');
  });
});

describe('time tokens', () => {
  const now = new Date('2026-03-31T12:00:00.000Z');

  it('resolve to the instant or the date that far before now, anywhere in the arguments', () => {
    expect(resolveTimeTokens({ a: '{{now}}', b: ['{{now-30d}}', '{{now-2h:date}}'], c: { d: '{{now-90s}}', e: 'not {{now}}', f: 3 } }, now)).toEqual({
      a: '2026-03-31T12:00:00.000Z',
      b: ['2026-03-01T12:00:00.000Z', '2026-03-31'],
      c: { d: '2026-03-31T11:58:30.000Z', e: 'not {{now}}', f: 3 },
    });
  });

  it('tell their age in seconds', () => {
    expect(timeTokenAgeSeconds(daysAgoToken(30))).toBe(30 * 86_400);
    expect(timeTokenAgeSeconds(daysAgoToken(0, true))).toBe(0);
    expect(daysAgoToken(45, true)).toBe('{{now-45d:date}}');
    expect(timeTokenAgeSeconds('{{now-5m}}')).toBe(300);
    expect(timeTokenAgeSeconds('2026-01-01')).toBeNull();
  });
});

describe('what counts as blocked', () => {
  it('is any decision but allow and warn', () => {
    expect(['block', 'escalate', 'budget_exceeded', 'rate_limited', 'downgrade'].every((d) => isBlockingDecision(d as never))).toBe(true);
    expect(isBlockingDecision('allow')).toBe(false);
    expect(isBlockingDecision('warn')).toBe(false);
    expect(scenarioStatus(['allow', 'warn', 'escalate'])).toBe('blocked');
    expect(scenarioStatus(['allow', 'warn'])).toBe('allowed');
  });
});
