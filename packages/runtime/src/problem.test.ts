import { describe, expect, it } from 'vitest';
import { ConflictError, isTransientInfraError, ServiceUnavailableError, ValidationError } from './errors.js';
import { retryAfterHeaders, toProblem } from './problem.js';

/** An error shaped like the `pg` driver's: a message and a SQLSTATE `code`. */
const pgError = (code: string, message = 'error') => Object.assign(new Error(message), { code, severity: 'FATAL' });
/** An error shaped like Node's socket errors (`err.code`). */
const sysError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, errno: -111, syscall: 'connect' });

describe('transient infrastructure failures are 503 with Retry-After', () => {
  const transient: Array<[string, unknown]> = [
    ['57P01 admin shutdown (pg_terminate_backend)', pgError('57P01', 'terminating connection due to administrator command')],
    ['57P02 crash shutdown', pgError('57P02')],
    ['57P03 cannot connect now (starting up / shutting down)', pgError('57P03', 'the database system is shutting down')],
    ['08006 connection failure', pgError('08006')],
    ['08001 unable to connect', pgError('08001')],
    ['53300 too many connections', pgError('53300')],
    ['ECONNREFUSED', sysError('ECONNREFUSED')],
    ['ECONNRESET', sysError('ECONNRESET')],
    ['AggregateError of ECONNREFUSED (happy eyeballs)', Object.assign(new AggregateError([sysError('ECONNREFUSED'), sysError('ECONNREFUSED')]), { code: undefined })],
    ['pg "Connection terminated unexpectedly"', new Error('Connection terminated unexpectedly')],
    ['pg "Client has encountered a connection error and is not queryable"', new Error('Client has encountered a connection error and is not queryable')],
    ['pg pool connect timeout', new Error('timeout exceeded when trying to connect')],
    ["Nest's NATS client string rejection", 'Error: Connection lost. Trying to reconnect...'],
    ['NATS ClosedConnectionError', Object.assign(new Error('closed connection'), { name: 'ClosedConnectionError' })],
    ['a cause chain ending in 57P01', new Error('append failed', { cause: pgError('57P01') })],
  ];
  // The KurrentDB client's command errors: `name` is plain Error, the kind is in `type` (utils/CommandError).
  const kurrentDbError = (type: string) => Object.assign(new Error('14 UNAVAILABLE: No connection established'), { type, code: 14 });
  transient.push(['KurrentDB unavailable', kurrentDbError('unavailable')], ['KurrentDB deadline exceeded', kurrentDbError('deadline-exceeded')], ['KurrentDB not the leader', kurrentDbError('not-leader')]);
  it.each(transient)('%s → 503', (_name, err) => {
    expect(isTransientInfraError(err)).toBe(true);
    const p = toProblem(err);
    expect(p).toMatchObject({ status: 503, title: 'Service Unavailable', type: 'https://agp.dev/problems/service-unavailable' });
    expect(p.detail).not.toMatch(/127\.0\.0\.1|administrator/); // internals stay hidden
    expect(retryAfterHeaders(p.status)).toEqual({ 'retry-after': '1' });
  });

  const permanent: Array<[string, unknown]> = [
    ['22021 data error (bad byte sequence)', pgError('22021')],
    ['23505 unique violation', pgError('23505')],
    ['42P01 undefined table (a bug)', pgError('42P01')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['an arbitrary string', 'boom'],
    ['KurrentDB wrong expected version (a conflict)', Object.assign(new Error('wrong expected version'), { type: 'wrong-expected-version' })],
  ];
  it.each(permanent)('%s → 500, no Retry-After', (_name, err) => {
    expect(isTransientInfraError(err)).toBe(false);
    expect(toProblem(err).status).toBe(500);
    expect(retryAfterHeaders(500)).toEqual({});
  });

  it('keeps the status of the platform’s own errors', () => {
    expect(toProblem(new ServiceUnavailableError('NATS down')).status).toBe(503);
    expect(toProblem(new ConflictError('moved', { cause: pgError('57P01') })).status).toBe(409);
    expect(toProblem(new ValidationError('bad', [{ path: 'body.x', message: 'required' }])).status).toBe(422);
  });
});
