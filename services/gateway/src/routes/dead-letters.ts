/**
 * `/api/v1/dead-letters`: the organisation's ingest and projection dead letters, answered by the gateway from the
 * platform's database through the query modules of the packages that write them (`@agp/bus` for ingest,
 * `@agp/eventstore` for projections), as the interventions list is read; the retry of an ingest dead letter through
 * ingest, and of a projection dead letter by the service that owns the projection
 * (`<owner>.retry-projection-dead-letter`; the gateway runs no projection). Admin keys only (checked at the edge from
 * the route table); every query is scoped by the caller's organisation, so another organisation's dead letter is a
 * 404. Source: docs/api.md (Dead letters); docs/decisions.md (Dead letters over HTTP); docs/architecture.md
 * (Projection dead letters).
 */
import { GatewayOps, MAX_GLOBAL_POSITION, projectionOwner, type DeadLetter, type DeadLetterPage, type DeadLetterRetry, type IngestResponse } from '@agp/contracts';
import { call, ingestDeadLetter, ingestDeadLetterFailedAgain, ingestDeadLetterPage, removeIngestDeadLetter, RemoteProblemError, type IngestDeadLetterRow } from '@agp/bus';
import { projectionDeadLetter, projectionDeadLetterPage, type ProjectionDeadLetterRow } from '@agp/eventstore';
import { ConflictError, NotFoundError, ServiceUnavailableError, ValidationError, databaseUnavailable, parseOrThrow } from '@agp/runtime';
import type { RouteAnswer, RouteCall } from '../router.js';
import { submitIngestBatch } from './ingest.js';

const deadLettersUnavailable = databaseUnavailable('the dead letters');

const iso = (t: Date | string): string => new Date(t).toISOString();

/** An ingest dead letter as the API shows it. */
function ingestLetter(r: IngestDeadLetterRow): DeadLetter {
  return { id: `ingest-${r.id}`, kind: 'ingest', source: r.consumer, reason: r.error, first_seen: iso(r.first_seen), last_seen: iso(r.last_seen), attempts: r.attempts, event: JSON.parse(r.payload) };
}

/** A projection dead letter as the API shows it (a row kept without its event shows the event's identity). */
function projectionLetter(r: ProjectionDeadLetterRow): DeadLetter {
  const event = r.event ? JSON.parse(r.event) : { event_id: r.event_id, type: r.event_type, stream_id: r.stream_id, global_position: r.global_position, data: null, metadata: null };
  return {
    id: `projection-${r.subscription}-${r.global_position}`,
    kind: 'projection',
    source: r.subscription,
    reason: r.error,
    first_seen: iso(r.first_seen),
    last_seen: iso(r.last_seen),
    attempts: r.attempts,
    event,
  };
}

/**
 * GET /api/v1/dead-letters?skip&limit&kind&projection: `{dead_letters, total, skip, limit}`, the most recently failed
 * first. Without `kind` both kinds are merged by `last_seen` (each read up to `skip + limit`).
 * @throws ValidationError (422) naming a bad query field, or `projection` with `kind=ingest`.
 * @throws ServiceUnavailableError (503) when the database cannot answer.
 */
export async function listDeadLetters({ req, ctx, deps }: RouteCall): Promise<RouteAnswer> {
  const { query: q } = parseOrThrow(GatewayOps['dead-letters.list'].request, { query: req.query });
  if (q.projection !== undefined && q.kind === 'ingest') {
    throw new ValidationError('1 invalid field: query.projection', [{ path: 'query.projection', message: 'names a projection: only with kind=projection or no kind' }]);
  }
  const org = ctx.organization_id;
  const wantIngest = q.kind !== 'projection' && q.projection === undefined;
  const wantProjection = q.kind !== 'ingest';
  const both = wantIngest && wantProjection;
  const window = both ? { skip: 0, limit: q.skip + q.limit } : { skip: q.skip, limit: q.limit };
  const [ingest, projection] = await Promise.all([
    wantIngest ? ingestDeadLetterPage(deps.database, org, window) : { rows: [], total: 0 },
    wantProjection ? projectionDeadLetterPage(deps.database, org, { ...window, subscription: q.projection }) : { rows: [], total: 0 },
  ]).catch(deadLettersUnavailable);
  let letters = [...ingest.rows.map(ingestLetter), ...projection.rows.map(projectionLetter)];
  if (both) letters = letters.sort((a, b) => b.last_seen.localeCompare(a.last_seen)).slice(q.skip, q.skip + q.limit);
  const body: DeadLetterPage = { dead_letters: letters, total: ingest.total + projection.total, skip: q.skip, limit: q.limit };
  return { body };
}

/**
 * POST /api/v1/dead-letters/{id}/retry: an ingest dead letter (`ingest-<n>`) through ingest
 * ({@link retryIngestDeadLetter}), a projection dead letter (`projection-<projection>-<position>`) through its
 * projection ({@link retryProjectionDeadLetter}).
 * @throws NotFoundError (404) for an id that is neither, or names no dead letter of the organisation.
 */
export async function retryDeadLetter(route: RouteCall): Promise<RouteAnswer> {
  const { path } = parseOrThrow(GatewayOps['dead-letters.retry'].request, { path: { id: route.params.id } });
  const projection = /^projection-(.+)-([0-9]{1,19})$/.exec(path.id);
  if (projection && BigInt(projection[2]) <= MAX_GLOBAL_POSITION) return retryProjectionDeadLetter(route, path.id, projection[1], projection[2]);
  const n = /^ingest-([0-9]{1,19})$/.exec(path.id)?.[1];
  if (n === undefined || BigInt(n) > MAX_GLOBAL_POSITION) throw new NotFoundError(`no dead letter ${path.id} in this organisation: an id is ingest-<n> or projection-<projection>-<position>`);
  return retryIngestDeadLetter(route, path.id, n);
}

/**
 * A projection dead letter, applied again by the service that owns its projection (`PROJECTION_OWNERS`) through
 * `<owner>.retry-projection-dead-letter`: the stored event through the projection's handler, in its transaction, its
 * checkpoint left where it is. Applied: the letter is removed, 200 `{id, result: 'retried', projection: {name,
 * event_id, global_position}}`. The owner's problem is answered as it is: 404 (no such letter of the organisation),
 * 409 (the projection's checkpoint is before the event: its replay applies it), 422 (refused or failed again: the
 * letter is kept with `last_seen`, `attempts` and the new reason), 503.
 * @throws ConflictError (409) for a letter of a subscription no service applies again (the enrichment worker's).
 */
async function retryProjectionDeadLetter({ ctx, deps }: RouteCall, id: string, name: string, position: string): Promise<RouteAnswer> {
  const owner = projectionOwner(name);
  if (!owner) {
    const letter = await projectionDeadLetter(deps.database, ctx.organization_id, name, BigInt(position)).catch(deadLettersUnavailable);
    if (!letter) throw new NotFoundError(`no projection dead letter ${id} in this organisation`);
    throw new ConflictError(`${name} is not a projection any service applies dead letters of again; replaying it (its checkpoint reset before position ${position}) meets the event again`);
  }
  const applied = await call(deps.bus, `${owner}.retry-projection-dead-letter`, ctx, { body: { projection: name, global_position: position } });
  const body: DeadLetterRetry = { id, result: 'retried', projection: applied };
  return { body };
}

/**
 * An ingest dead letter, re-submitted through ingest (its validation, its log), as the organisation's events with the
 * calling key as actor. Every event accepted as created: the dead letter is removed, 200 with ingest's answer.
 * Otherwise the dead letter keeps only the events not accepted, with `last_seen`, `attempts` and the reason updated,
 * and the answer is 422 (ingest refused an event), 503 (ingest could not take one) or 409 (ingest answered one as a
 * duplicate: stored already, or its original message is still in the log's dedupe window of 2 minutes).
 * @throws NotFoundError (404) for an id that is not an ingest dead letter of the organisation.
 */
async function retryIngestDeadLetter({ ctx, deps }: RouteCall, id: string, n: string): Promise<RouteAnswer> {
  const path = { id };
  const org = ctx.organization_id;
  const row = await ingestDeadLetter(deps.database, org, n).catch(deadLettersUnavailable);
  if (!row) throw new NotFoundError(`no ingest dead letter ${path.id} in this organisation`);
  const message = JSON.parse(row.payload) as { events?: unknown };
  const events = Array.isArray(message.events) ? (message.events as Array<Record<string, unknown>>) : [];
  if (events.length === 0) throw new ConflictError(`dead letter ${path.id} holds no events to retry`);
  // The log message carries each event with the id the consumer assigned; ingest assigns a new one.
  const batch = events.map(({ assigned_id: _assigned, ...event }) => event);
  let answer: IngestResponse;
  try {
    answer = await submitIngestBatch(deps.bus, ctx, batch);
  } catch (err) {
    if (!(err instanceof RemoteProblemError) || err.status >= 500) throw err;
    await ingestDeadLetterFailedAgain(deps.database, org, n, { error: `retry refused: ${err.message}`, payload: message }).catch(deadLettersUnavailable);
    throw new ValidationError(`ingest refused the retry of ${path.id}: ${err.message}`, [{ path: 'events', message: err.message }], { cause: err });
  }
  const created = new Set(answer.successes.filter((s) => s.result === 'created').map((s) => s.id));
  const left = events.filter((e) => !created.has(String(e.id)));
  if (left.length === 0) {
    await removeIngestDeadLetter(deps.database, org, n).catch(deadLettersUnavailable);
    const body: DeadLetterRetry = { id: path.id, result: 'retried', ingest: answer };
    return { body };
  }
  const refused = answer.errors.filter((e) => e.status !== 503);
  const reasons = [...refused.map((e) => `${e.id}: ${e.message}`), ...answer.successes.filter((s) => s.result === 'duplicate').map((s) => `${s.id}: duplicate`)];
  const unavailable = answer.errors.length > refused.length;
  await ingestDeadLetterFailedAgain(deps.database, org, n, { error: `retry ${refused.length ? 'refused' : 'not accepted'}: ${reasons.join('; ') || 'ingest unavailable'}`, payload: { ...message, events: left } }).catch(
    deadLettersUnavailable,
  );
  if (refused.length) {
    throw new ValidationError(
      `ingest refused ${refused.length} of ${events.length} events of ${path.id} again; the dead letter is kept`,
      refused.map((e) => ({ path: `events[${events.findIndex((x) => String(x.id) === e.id)}]`, message: e.message })),
    );
  }
  if (unavailable) throw new ServiceUnavailableError(`ingest could not take every event of ${path.id}; the dead letter is kept with the events not accepted`);
  throw new ConflictError(`ingest answered ${reasons.join('; ')} for ${path.id}: stored already, or its original message is still in the log's dedupe window (2 minutes); the dead letter is kept`);
}
