/**
 * The `/api/v1/replay` routes that do more than forward (the others are forwarded as the route table says:
 * ../forward.ts): a submission (its status and Location depend on the reply) and the run bundle. The run bundle is
 * assembled and hashed by the replay service (`replay.bundle`); since its actions may exceed one bus message (1 MiB),
 * the gateway fetches them part by part (`replay.bundle-part`, naming the bundle's sha256) and writes the document
 * with backpressure, its ETag before the body. Read keys are refused submissions (403) at the edge, and a submission
 * body over 900 KiB is refused (413) by the body reader. Source: spec §Replay history; architecture §1.
 */
import { call, callUnchecked } from '@agp/bus';
import { noneMatch } from '../etag.js';
import type { RouteAnswer, RouteCall } from '../router.js';
import { write } from './stats.js';

/** POST /api/v1/replay/{run_id}/results: 201 with the stored submission; 200 with the one stored before for a repeated id. */
export async function submitReplay({ req, res, ctx, params, deps }: RouteCall): Promise<RouteAnswer> {
  const out = await callUnchecked(deps.bus, 'replay.submit', ctx, { path: { run_id: params.run_id }, body: req.body ?? {} });
  res.location(`/api/v1/replay/history/${encodeURIComponent(params.run_id)}`);
  return { body: out.submission, status: out.created ? 201 : 200 };
}

/**
 * GET /api/v1/replay/{run_id}/bundle: the bundle (`ReplayBundleSchema`) with `ETag: "<sha256>"`, or 304 without a
 * body when If-None-Match holds it. Errors (404 unknown run, 413) come before anything is written; a part that
 * fails after the headers are out (the run changed: 409) aborts the response.
 */
export async function getReplayBundle({ req, res, ctx, params, deps }: RouteCall): Promise<void> {
  const path = { run_id: params.run_id };
  const { actions_total: _t, parts, sha256, ...head } = await callUnchecked(deps.bus, 'replay.bundle', ctx, { path });
  const etag = `"${sha256}"`;
  res.set({ etag, 'cache-control': 'private, no-cache', vary: 'Authorization, X-API-Key' });
  if (noneMatch(req.get('if-none-match'), etag)) {
    res.status(304).end();
    return;
  }
  res.status(200).type('application/json');
  try {
    await write(res, `${JSON.stringify({ ...head, sha256 }).slice(0, -1)},"actions":[`);
    for (let part = 0; part < parts; part++) {
      const { actions } = await call(deps.bus, 'replay.bundle-part', ctx, { path, query: { sha256, part } }, 30_000);
      await write(res, (part ? ',' : '') + actions.map((a) => JSON.stringify(a)).join(','));
    }
    await write(res, ']}');
    res.end();
  } catch {
    // Headers and part of the body are out: the only honest signal left is an aborted response.
    res.destroy();
  }
}
