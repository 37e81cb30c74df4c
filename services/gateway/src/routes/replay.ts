/**
 * The `/api/v1/replay` routes that do more than forward (the others are forwarded as the route table says:
 * ../forward.ts): a submission (its status and Location depend on the reply) and the run bundle. The run bundle is
 * assembled and hashed by the replay service (`replay.bundle`); since its actions may exceed one bus message (1 MiB),
 * the gateway fetches them part by part (`replay.bundle-part`, naming the bundle's sha256) and writes the document
 * with backpressure, its ETag before the body. Read keys are refused submissions (403) at the edge, and a submission
 * body over 900 KiB is refused (413) by the body parser. Source: spec §Replay history; architecture §1.
 */
import { Body, Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { call, callUnchecked, type Sender } from '@agp/bus';
import { BUS, ctxOf } from '../controllers.js';
import type { AuthedRequest } from '../edge.js';
import { write } from './stats.js';

/** Whether `If-None-Match` of `req` names `etag` (or `*`); weak tags compare equal. */
function notModified(req: Request, etag: string): boolean {
  const inm = req.get('if-none-match');
  return !!inm && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag || t.trim() === '*');
}

/** Replay submissions and run bundles. */
@Controller('api/v1/replay')
export class ReplayController {
  constructor(@Inject(BUS) private readonly bus: Sender) {}

  /** POST /api/v1/replay/{run_id}/results: 201 with the stored submission; 200 with the one stored before for a repeated id. */
  @Post(':runId/results')
  async submit(@Req() req: AuthedRequest, @Param('runId') runId: string, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const out = await callUnchecked(this.bus, 'replay.submit', ctxOf(req), { path: { run_id: runId }, body: body ?? {} });
    res.status(out.created ? 201 : 200).location(`/api/v1/replay/history/${encodeURIComponent(runId)}`);
    return out.submission;
  }

  /**
   * GET /api/v1/replay/{run_id}/bundle: the bundle (`ReplayBundleSchema`) with `ETag: "<sha256>"`, or 304 without a
   * body when If-None-Match holds it. Errors (404 unknown run, 413) come before anything is written; a part that
   * fails after the headers are out (the run changed: 409) aborts the response.
   */
  @Get(':runId/bundle')
  async bundle(@Req() req: AuthedRequest, @Param('runId') runId: string, @Res() res: Response): Promise<void> {
    const ctx = ctxOf(req);
    const { actions_total: _t, parts, sha256, ...head } = await callUnchecked(this.bus, 'replay.bundle', ctx, { path: { run_id: runId } });
    const etag = `"${sha256}"`;
    res.set({ etag, 'cache-control': 'private, no-cache', vary: 'Authorization, X-API-Key' });
    if (notModified(req, etag)) {
      res.status(304).end();
      return;
    }
    res.status(200).type('application/json');
    try {
      await write(res, `${JSON.stringify({ ...head, sha256 }).slice(0, -1)},"actions":[`);
      for (let part = 0; part < parts; part++) {
        const { actions } = await call(this.bus, 'replay.bundle-part', ctx, { path: { run_id: runId }, query: { sha256, part } }, 30_000);
        await write(res, (part ? ',' : '') + actions.map((a) => JSON.stringify(a)).join(','));
      }
      await write(res, ']}');
      res.end();
    } catch {
      // Headers and part of the body are out: the only honest signal left is an aborted response.
      res.destroy();
    }
  }
}

/** The replay routes, registered by the gateway module. */
export const replayControllers = [ReplayController];
