import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const LIFECYCLE = fileURLToPath(new URL('./lifecycle.ts', import.meta.url));

/** A process that calls exitOnSignals with a shutdown that never finishes, then prints `ready`. */
function hungProcess(graceMs: number) {
  const code = `
    const { exitOnSignals } = await import(${JSON.stringify(LIFECYCLE)});
    const logger = { info() {}, error(o, m) { process.stderr.write(m + '\\n'); } };
    exitOnSignals(() => new Promise(() => {}), logger, ${graceMs});
    setInterval(() => {}, 1000);
    process.stdout.write('ready\\n');
  `;
  return spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('exitOnSignals', () => {
  it('exits with code 1 when the shutdown on SIGTERM does not finish within its time limit', async () => {
    const child = hungProcess(300);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d) => String(d).includes('ready') && resolve());
      child.once('exit', () => reject(new Error(`exited before ready: ${stderr}`)));
    });
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => {
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(null);
      }, 10_000);
      child.once('exit', (c) => {
        clearTimeout(t);
        resolve(c);
      });
    });
    expect(code).toBe(1);
    expect(stderr).toContain('shutdown did not finish in time');
  }, 30_000);
});
