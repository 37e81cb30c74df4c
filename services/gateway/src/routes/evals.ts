/**
 * `POST /api/v1/evals`, the one evals route that does more than forward (its status and Location depend on the
 * reply; the others are forwarded as the route table says: ../forward.ts). The request parts are checked against the
 * row's schema before sending (a 422 names each bad field, as the service would). Read keys are refused (403) at the
 * edge, and a body over 900 KiB is refused (413) by the body reader (`maxBodyBytes` of its row).
 * Source: spec §Evals.
 */
import { callUnchecked } from '@agp/bus';
import type { RouteAnswer, RouteCall } from '../router.js';

/** POST /api/v1/evals: 201 with the stored run and its Location; 200 with the run stored before for a repeated submission id. */
export async function submitEvalRun({ req, res, ctx, deps }: RouteCall): Promise<RouteAnswer> {
  const out = await callUnchecked(deps.bus, 'evals.submit', ctx, { body: req.body ?? {} });
  res.location(`/api/v1/evals/${encodeURIComponent(out.eval_run.id)}`);
  return { body: out.eval_run, status: out.created ? 201 : 200 };
}
