/**
 * The git branch checked out in a directory, for `agp evals gate` uploads that name no branch (no `--branch`, none in
 * the results file, none from the CI): without one a run is stored with `branch: null` and can never be a baseline
 * (`GET /api/v1/evals/latest` looks runs up by branch). Source: docs/evals-gate.md (Branch and commit).
 */
import { execFile } from 'node:child_process';

/**
 * The short name of the branch checked out in `cwd` (`git symbolic-ref --short -q HEAD`), or null when there is none:
 * not a git work tree, a detached HEAD (a CI checkout of a commit), git not installed, or no answer within 5 s.
 * Never throws.
 */
export function gitBranch(cwd: string): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('git', ['symbolic-ref', '--short', '-q', 'HEAD'], { cwd, timeout: 5_000, windowsHide: true }, (err, stdout) => {
      const branch = err ? '' : String(stdout).trim();
      resolve(branch ? branch : null);
    });
  });
}
