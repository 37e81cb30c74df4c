/**
 * `POST /api/v1/evals`, the one evals route that does more than forward (its status and Location depend on the
 * reply; the others are forwarded as the route table says: ../forward.ts). The request parts are checked against the
 * row's schema before sending (a 422 names each bad field, as the service would). Read keys are refused (403) at the
 * edge, and a body over 900 KiB is refused (413) by the body parser (`maxBodyBytes` of its route).
 * Source: spec §Evals.
 */
import { Body, Controller, Inject, Post, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { callUnchecked, type Sender } from '@agp/bus';
import { BUS, ctxOf } from '../controllers.js';
import type { AuthedRequest } from '../edge.js';

/** Eval run submission. */
@Controller('api/v1/evals')
export class EvalsController {
  constructor(@Inject(BUS) private readonly bus: Sender) {}

  /** POST /api/v1/evals: 201 with the stored run and its Location; 200 with the run stored before for a repeated submission id. */
  @Post()
  async submit(@Req() req: AuthedRequest, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const out = await callUnchecked(this.bus, 'evals.submit', ctxOf(req), { body: body ?? {} });
    res.status(out.created ? 201 : 200).location(`/api/v1/evals/${encodeURIComponent(out.eval_run.id)}`);
    return out.eval_run;
  }
}

/** The evals routes, registered by the gateway module. */
export const evalsControllers = [EvalsController];
