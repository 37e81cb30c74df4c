/**
 * The `/api/v1/interventions` routes that do more than forward (stats, get, enrich and delete are forwarded as the
 * route table says: ../forward.ts): the list, read in this process through the interventions service's query module
 * (docs/architecture.md, query modules), and create (201 with its Location). Each checks its parts against its wire
 * row first (a 422 names `query.limit`, `body.agent_id` exactly as the service would).
 * Source: spec §Interventions; architecture §4.
 */
import { Wire } from '@agp/contracts';
import { callUnchecked } from '@agp/bus';
import { databaseUnavailable, parseOrThrow } from '@agp/runtime';
import type { RouteCall, RouteAnswer } from '../router.js';

const readModelUnavailable = databaseUnavailable('the interventions read model');

/**
 * GET /api/v1/interventions: the filtered, paginated list `{interventions, total, skip, limit}`. The query is
 * checked against the `interventions.list` wire row (the same 422 as over the bus), then the page is read here from
 * the list read model as UTF-8 JSON bytes — a cached page goes from memory to the socket, after one checkpoint read
 * proves it current.
 * @throws ServiceUnavailableError (503) while the read model cannot be read.
 */
export async function listInterventions({ req, ctx, deps }: RouteCall): Promise<RouteAnswer> {
  const { query } = parseOrThrow(Wire['interventions.list'].request, { query: req.query });
  return { body: await deps.interventions.listBytes(ctx.organization_id, query).catch(readModelUnavailable) };
}

/** POST /api/v1/interventions: 201 with the stored record and its Location. */
export async function createIntervention({ req, res, ctx, deps }: RouteCall): Promise<RouteAnswer> {
  const record = await callUnchecked(deps.bus, 'interventions.create', ctx, { body: req.body ?? {} });
  res.location(`/api/v1/interventions/${record.id}`);
  return { body: record };
}
