/**
 * `/api/v1/approvals`: the approval inbox, forwarded to the interventions service.
 * Source: issue #3 point 3; ARCHITECTURE.md §4 (Approvals).
 */
import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import type { ClientProxy } from '@nestjs/microservices';
import { Patterns } from '@agp/contracts';
import { callRpc } from '@agp/bus';
import { BUS, ctxOf } from '../controllers.js';
import type { AuthedRequest } from '../edge.js';

/** List (`?status=pending`), get, approve, reject. */
@Controller('api/v1/approvals')
export class ApprovalsController {
  constructor(@Inject(BUS) private readonly bus: Pick<ClientProxy, 'send'>) {}

  @Get()
  list(@Req() req: AuthedRequest, @Query() query: unknown) {
    return callRpc(this.bus, Patterns.approvalsList, { ctx: ctxOf(req), body: query });
  }

  @Get(':id')
  get(@Req() req: AuthedRequest, @Param('id') id: string) {
    return callRpc(this.bus, Patterns.approvalsGet, { ctx: ctxOf(req), body: { id } });
  }

  @Post(':id/approve')
  @HttpCode(200)
  approve(@Req() req: AuthedRequest, @Param('id') id: string, @Body() body: unknown) {
    return callRpc(this.bus, Patterns.approvalsApprove, { ctx: ctxOf(req), body: { id, decision: body ?? {} } });
  }

  @Post(':id/reject')
  @HttpCode(200)
  reject(@Req() req: AuthedRequest, @Param('id') id: string, @Body() body: unknown) {
    return callRpc(this.bus, Patterns.approvalsReject, { ctx: ctxOf(req), body: { id, decision: body ?? {} } });
  }
}

export const approvalsControllers = [ApprovalsController];
