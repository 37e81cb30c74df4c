/**
 * `/api/v1/approvals`: the approval inbox, forwarded to the interventions service.
 * Source: docs/api.md (Approvals); architecture §4 (Approvals).
 */
import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { ClientProxy } from '@nestjs/microservices';
import { callUnchecked } from '@agp/bus';
import { BUS, ctxOf, sendable } from '../controllers.js';
import type { AuthedRequest } from '../edge.js';

/**
 * List (`?status=pending`), get, approve, reject. Each route checks its parts against its wire row (`approvals.*`, a
 * 422 as the service would answer it) and forwards them; 404s and 409s come from the service.
 */
@Controller('api/v1/approvals')
export class ApprovalsController {
  constructor(@Inject(BUS) private readonly bus: Pick<ClientProxy, 'send'>) {}

  /** GET /api/v1/approvals?status&agent_id&run_id&skip&limit: `{approvals, total, skip, limit}`, newest first. */
  @Get()
  async list(@Req() req: AuthedRequest, @Query() query: unknown, @Res({ passthrough: true }) res: Response) {
    return sendable(res, await callUnchecked(this.bus, 'approvals.list', ctxOf(req), { query }));
  }

  /** GET /api/v1/approvals/{id}: one approval; 404 when unknown or another organisation's. */
  @Get(':id')
  get(@Req() req: AuthedRequest, @Param('id') id: string) {
    return callUnchecked(this.bus, 'approvals.get', ctxOf(req), { path: { id } });
  }

  /** POST /api/v1/approvals/{id}/approve `{approver_email, notes?}`: 200 with the approved approval; 409 if already decided. */
  @Post(':id/approve')
  @HttpCode(200)
  approve(@Req() req: AuthedRequest, @Param('id') id: string, @Body() body: unknown) {
    return callUnchecked(this.bus, 'approvals.approve', ctxOf(req), { path: { id }, body: body ?? {} });
  }

  /** POST /api/v1/approvals/{id}/reject `{approver_email, notes?}`: 200 with the rejected approval; 409 if already decided. */
  @Post(':id/reject')
  @HttpCode(200)
  reject(@Req() req: AuthedRequest, @Param('id') id: string, @Body() body: unknown) {
    return callUnchecked(this.bus, 'approvals.reject', ctxOf(req), { path: { id }, body: body ?? {} });
  }
}

/** The approvals routes, registered by the gateway module. */
export const approvalsControllers = [ApprovalsController];
