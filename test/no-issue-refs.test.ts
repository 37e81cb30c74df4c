import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Code and docs cite what a reader can open — a spec section, an architecture section, a docs page — never a tracker
 * number: no tracked file but CHANGELOG.md (where history belongs) and the `.ci/` folder may contain "issue #" followed
 * by a digit (any case). Reads the working tree's copy of every file `git ls-files` lists, so an edit is caught before
 * it is committed; binary files (a NUL byte) are not read. Outside a git checkout the test skips with one printed line.
 */
const ROOT = resolve(import.meta.dirname, '..');
const PATTERN = new RegExp('issue #\\d', 'i');

/** Tracked paths relative to the repository root, or null when `git ls-files` cannot run here. */
function trackedFiles(): string[] | null {
  try {
    const out = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    return out.split('\0').filter((p) => p.length > 0);
  } catch {
    return null;
  }
}

const files = trackedFiles();
if (files === null) console.warn('[agp tests] no-issue-refs: skipped, `git ls-files` failed (not a git checkout, or git is missing).');

describe.skipIf(files === null)('no tracker numbers in code and docs', () => {
  it('finds the tracked files', () => {
    expect(files).toContain('README.md');
    expect(files).toContain('CHANGELOG.md');
  });

  it('has no "issue #<digit>" outside CHANGELOG.md and .ci/', () => {
    const offenders: string[] = [];
    for (const path of files ?? []) {
      if (path === 'CHANGELOG.md' || path.startsWith('.ci/')) continue;
      const full = join(ROOT, path);
      if (!existsSync(full)) continue; // deleted in the working tree, not yet committed
      const text = readFileSync(full);
      if (text.includes(0)) continue;
      text
        .toString('utf8')
        .split('\n')
        .forEach((line, i) => {
          if (PATTERN.test(line)) offenders.push(`${path}:${i + 1}: ${line.trim().slice(0, 120)}`);
        });
    }
    expect(offenders, 'cite the spec, the architecture or a docs page instead').toEqual([]);
  });

  it('recognises the pattern it guards against', () => {
    expect(PATTERN.test(['Source: Issue', '#12.'].join(' '))).toBe(true);
    expect(PATTERN.test('Source: spec §Evals; docs/decisions.md (Evals).')).toBe(false);
  });
});
