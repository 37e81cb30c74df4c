/**
 * `/api/v1/stats/*`, `/api/v1/runs`, the ledger export: forwarded to the stats service.
 * Source: issue #3 point 4; platform-api.md (Stats).
 */
import { Controller, Get, Inject, Param, Query, Req } from '@nestjs/common';
import type { ClientProxy } from '@nestjs/microservices';
import { Patterns } from '@agp/contracts';
import { callRpc } from '@agp/bus';
import { BUS, ctxOf } from '../controllers.js';
import type { AuthedRequest } from '../edge.js';

type Bus = Pick<ClientProxy, 'send'>;

/** Aggregate totals, the daily series, estimation accuracy, per-agent stats. */
@Controller('api/v1/stats')
export class StatsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Get()
  summary(@Req() req: AuthedRequest, @Query() query: unknown) {
    return callRpc(this.bus, Patterns.statsSummary, { ctx: ctxOf(req), body: query });
  }

  @Get('daily')
  daily(@Req() req: AuthedRequest, @Query() query: unknown) {
    return callRpc(this.bus, Patterns.statsDaily, { ctx: ctxOf(req), body: query });
  }

  @Get('estimation-accuracy')
  estimationAccuracy(@Req() req: AuthedRequest, @Query() query: unknown) {
    return callRpc(this.bus, Patterns.statsEstimationAccuracy, { ctx: ctxOf(req), body: query });
  }
}

/** Runs: the list_runs filters plus skip, and one run with its actions. */
@Controller('api/v1/runs')
export class RunsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Get()
  list(@Req() req: AuthedRequest, @Query() query: unknown) {
    return callRpc(this.bus, Patterns.runsList, { ctx: ctxOf(req), body: query });
  }

  @Get(':id')
  get(@Req() req: AuthedRequest, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    return callRpc(this.bus, Patterns.runsGet, { ctx: ctxOf(req), body: { id, query } });
  }
}

export const statsControllers = [StatsController, RunsController];
