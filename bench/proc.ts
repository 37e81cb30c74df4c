/**
 * What the benchmarks read of a process from /proc (Linux): its CPU time so far, the processes of a command name, the
 * PostgreSQL backends of one database. Source: docs/performance.md (how each benchmark attributes CPU).
 */
import { readFileSync, readdirSync } from 'node:fs';

/** CPU time (user + system) of a process so far, in ms, from /proc (Linux); 0 when it is gone. */
export function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return 0;
  }
}

/** pids of every process whose command name is `comm` (e.g. all PostgreSQL backends). */
export function pidsNamed(comm: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === comm;
      } catch {
        return false;
      }
    });
}

/**
 * pids of the PostgreSQL backends connected to database `db` (their process title, `postgres: [cluster:] <user> <db> <host> …`,
 * names it): on a machine where other work uses the same server, the platform's own share of PostgreSQL.
 */
export function postgresBackendsOf(db: string): number[] {
  return pidsNamed('postgres').filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(' ').includes(db);
    } catch {
      return false;
    }
  });
}
