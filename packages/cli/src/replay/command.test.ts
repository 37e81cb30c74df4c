import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { formatSummary, progressLine, registerReplayCommand } from './command.js';

/** The words `agp replay` prints: its help, its progress and its summary. */
describe('agp replay text', () => {
  it('the help shows --handlers as required, in the usage line and its description', () => {
    const replay = registerReplayCommand(new Command('agp'), { env: {}, out: () => {}, err: () => {} });
    const help = replay.helpInformation();
    expect(help).toContain('Usage: agp replay --handlers <module> [options] <run_id>');
    expect(help).toMatch(/--handlers <module>\s+required:/);
  });

  it('numbers a step the same in its progress line and in the summary: from 0, as the platform does', () => {
    const summary = formatSummary('r1', {
      status: 'partial',
      actions_total: 12,
      actions_replayed: 12,
      skipped_no_handler: 0,
      skipped_nondeterministic: 0,
      divergences: 1,
      cost_savings: 0,
      divergence_details: [{ step: 1, action_name: 'uppercase', expected: { text: 'HI!' }, actual: { text: 'HI' } }],
    }, null);
    expect(progressLine(1, 12, 'uppercase', 'diverged')).toBe('step  1 uppercase: DIVERGED\n');
    expect(progressLine(0, 12, 'add', 'match')).toBe('step  0 add: match\n');
    expect(progressLine(11, 12, 'last', 'skipped-no-handler')).toBe('step 11 last: skipped (no handler)\n');
    expect(summary).toContain('step 1 uppercase: expected {"text":"HI!"}, got {"text":"HI"}');
  });
});
