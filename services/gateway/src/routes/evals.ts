/**
 * `/api/v1/evals`: forwarded to the evals service as the wire table's `evals.*` messages. The request parts are checked
 * against the row's schema before sending (a 422 names each bad field, as the service would); the service scopes
 * everything by the caller's organisation. Read keys are refused writes (403) at the edge, and a submission body over
 * 900 KiB is refused (413) by the body parser before anything is sent (`maxBodyBytes` of its route).
 * Source: spec §Evals.
 */
import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { callUnchecked, type Sender } from '@agp/bus';
import { BUS, ctxOf } from '../controllers.js';
import type { AuthedRequest } from '../edge.js';

/** Eval runs: submit, history, latest, benchmarks, comparison, one run, scenario generation. */
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

  /** GET /api/v1/evals?suite&agent_id&branch&skip&limit: `{eval_runs, total, skip, limit}`, newest first. */
  @Get()
  list(@Req() req: AuthedRequest, @Query() query: unknown) {
    return callUnchecked(this.bus, 'evals.list', ctxOf(req), { query });
  }

  /** GET /api/v1/evals/latest?suite&agent_id&branch: the newest matching run with its scenarios; 404 when none. */
  @Get('latest')
  latest(@Req() req: AuthedRequest, @Query() query: unknown) {
    return callUnchecked(this.bus, 'evals.latest', ctxOf(req), { query });
  }

  /** GET /api/v1/evals/benchmarks?runs&suite&agent_id&skip&limit: per suite and agent, the trend, the best and the latest run. */
  @Get('benchmarks')
  benchmarks(@Req() req: AuthedRequest, @Query() query: unknown) {
    return callUnchecked(this.bus, 'evals.benchmarks', ctxOf(req), { query });
  }

  /** GET /api/v1/evals/compare/{baseline_id}/{current_id}: the comparison; 404 when either run is unknown. */
  @Get('compare/:baselineId/:currentId')
  compare(@Req() req: AuthedRequest, @Param('baselineId') baselineId: string, @Param('currentId') currentId: string) {
    return callUnchecked(this.bus, 'evals.compare', ctxOf(req), { path: { baseline_id: baselineId, current_id: currentId } });
  }

  /** POST /api/v1/evals/generate-scenarios `{agent_id, max_per_category?, seed?}`: 200 with the generated scenarios. */
  @Post('generate-scenarios')
  @HttpCode(200)
  generateScenarios(@Req() req: AuthedRequest, @Body() body: unknown) {
    return callUnchecked(this.bus, 'evals.generate-scenarios', ctxOf(req), { body: body ?? {} }, 120_000);
  }

  /** GET /api/v1/evals/{id}: one run with its scenarios; 404 when unknown or another organisation's. */
  @Get(':id')
  get(@Req() req: AuthedRequest, @Param('id') id: string) {
    return callUnchecked(this.bus, 'evals.get', ctxOf(req), { path: { id } });
  }
}

/** The evals routes, registered by the gateway module. */
export const evalsControllers = [EvalsController];
