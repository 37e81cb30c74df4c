import { expect, it } from 'vitest';
import { describeModes } from '../support/modes.js';
import { call, eventually } from '../support/http.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

// The W3C traceparent of an HTTP request is carried on the ingest path too (through the ingest log) and
// stored in the metadata of the events it causes, as it already was for synchronous writes.
describeModes('trace context', (platform) => {
  it('stores the traceparent of an ingest request in the metadata of the events it caused', async () => {
    const p = platform();
    const agent = `trace-agent-${Date.now()}`;
    const event = { id: `trace-${agent}`, type: 'intervention.create', timestamp: new Date().toISOString(), body: { type: 'hard_block', outcome: 'blocked', action_name: 'delete_records', agent_id: agent } };
    const res = await call(p, 'POST', '/api/v1/ingest/', { key: p.writeKey, body: { batch: [event] }, headers: { traceparent: TRACEPARENT } });
    expect(res.status).toBe(207);
    expect(res.body.successes).toEqual([{ id: event.id, status: 201, result: 'created' }]);
    const id = await eventually(async () => (await call(p, 'GET', `/api/v1/interventions?agent_id=${agent}`, { key: p.readKey })).body.interventions?.[0]?.id as string | undefined);
    const [recorded] = await p.streamMetadata(`intervention-${id}`);
    expect(recorded).toMatchObject({ organization_id: 'acme', traceparent: TRACEPARENT });
  });

  it('stores the traceparent of a synchronous write, and none when the request had none', async () => {
    const p = platform();
    const body = { type: 'hard_block', outcome: 'blocked', action_name: 'delete_records', agent_id: 'trace-sync' };
    const traced = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body, headers: { traceparent: TRACEPARENT } });
    const plain = await call(p, 'POST', '/api/v1/interventions', { key: p.writeKey, body });
    expect([traced.status, plain.status]).toEqual([201, 201]);
    expect((await p.streamMetadata(`intervention-${traced.body.id}`))[0].traceparent).toBe(TRACEPARENT);
    expect((await p.streamMetadata(`intervention-${plain.body.id}`))[0]).not.toHaveProperty('traceparent');
  });
});
