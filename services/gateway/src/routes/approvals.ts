/**
 * `/api/v1/approvals`: the approval inbox, forwarded to the interventions service.
 * Source: issue #3 point 3; ARCHITECTURE.md §4 (Approvals).
 */
import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { ClientProxy } from '@nestjs/microservices';
import { Patterns, type ApprovalRecord } from '@agp/contracts';
import { callRpc } from '@agp/bus';
import { BUS, ctxOf, sendable } from '../controllers.js';
import type { AuthedRequest } from '../edge.js';

/** List (`?status=pending`), get, approve, reject. Validation, 404s and 409s come from the service. */
@Controller('api/v1/approvals')
export class ApprovalsController {
  constructor(@Inject(BUS) private readonly bus: Pick<ClientProxy, 'send'>) {}

  /** GET /api/v1/approvals?status&agent_id&run_id&skip&limit: `{approvals, total, skip, limit}`, newest first. */
  @Get()
  async list(@Req() req: AuthedRequest, @Query() query: unknown, @Res({ passthrough: true }) res: Response) {
    return sendable(res, await callRpc(this.bus, Patterns.approvalsList, { ctx: ctxOf(req), body: query }));
  }

  /** GET /api/v1/approvals/{id}: one approval; 404 when unknown or another organisation's. */
  @Get(':id')
  get(@Req() req: AuthedRequest, @Param('id') id: string) {
    return callRpc<ApprovalRecord>(this.bus, Patterns.approvalsGet, { ctx: ctxOf(req), body: { id } });
  }

  /** POST /api/v1/approvals/{id}/approve `{approver_email, notes?}`: 200 with the approved approval; 409 if already decided. */
  @Post(':id/approve')
  @HttpCode(200)
  approve(@Req() req: AuthedRequest, @Param('id') id: string, @Body() body: unknown) {
    return callRpc<ApprovalRecord>(this.bus, Patterns.approvalsApprove, { ctx: ctxOf(req), body: { id, decision: body ?? {} } });
  }

  /** POST /api/v1/approvals/{id}/reject `{approver_email, notes?}`: 200 with the rejected approval; 409 if already decided. */
  @Post(':id/reject')
  @HttpCode(200)
  reject(@Req() req: AuthedRequest, @Param('id') id: string, @Body() body: unknown) {
    return callRpc<ApprovalRecord>(this.bus, Patterns.approvalsReject, { ctx: ctxOf(req), body: { id, decision: body ?? {} } });
  }
}

/** The approvals routes, registered by the gateway module. */
export const approvalsControllers = [ApprovalsController];
