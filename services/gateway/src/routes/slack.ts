/**
 * `POST /api/v1/integrations/slack/interactivity`: Slack's interactivity callback. No API key: Slack signs it. The body
 * is read here as it arrived (the signature covers its bytes), at most 1 MiB, and sent on to the policies service
 * (`integrations.slack-interactivity`) with the signature headers, in the context of the organisation its button names;
 * the policies service verifies it with that organisation's signing secret (401 otherwise, nothing changed).
 * Source: docs/notifications.md (Approvals in Slack).
 */
import { randomUUID } from 'node:crypto';
import { slackCallbackOrganization } from '@agp/contracts';
import { call } from '@agp/bus';
import { PayloadTooLargeError, UnauthorizedError } from '@agp/runtime';
import type { RouteAnswer, RouteCall } from '../router.js';

/** Largest interactivity body read, in bytes. */
const MAX_BYTES = 1_048_576;

/** Read a request's body as UTF-8 text, at most {@link MAX_BYTES}. @throws PayloadTooLargeError (413) past it. */
async function readText(req: RouteCall['req']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BYTES) throw new PayloadTooLargeError(`the body is over ${MAX_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** See the module's doc. @throws UnauthorizedError (401) when the body names no organisation (so no secret can verify it). */
export async function slackInteractivity({ req, res, deps }: RouteCall): Promise<RouteAnswer> {
  const raw = await readText(req);
  const org = slackCallbackOrganization(raw);
  if (!org) throw new UnauthorizedError('not a request signed by a Slack app of this platform (X-Slack-Signature)');
  const ctx = { organization_id: org, scope: 'read' as const, key_id: 'slack-interactivity', correlation_id: (res.locals.requestId as string | undefined) ?? randomUUID() };
  return { body: await call(deps.bus, 'integrations.slack-interactivity', ctx, { body: { raw, timestamp: req.get('x-slack-request-timestamp') ?? null, signature: req.get('x-slack-signature') ?? null } }) };
}
