/**
 * Ingest load for the fault suite, and the read of the read model that counts what became of it.
 *
 * The load sends batches of ingest events (`POST /api/v1/ingest/`) to the gateway at a steady pace, as a careful
 * client would: an event counts as acknowledged once an answer lists it among the successes (201 created or 200
 * duplicate); an event that was not acknowledged (a 503, a refused connection, a timeout, a per-event 503 inside a
 * 207) is sent again with the same id after `Retry-After` (at most 2 s) or 0.5 s, so a retry of an event that did get
 * through must come back `duplicate` and be stored once. Every answer is recorded with its time, so a test can say
 * which statuses were seen during a fault.
 */

/** One HTTP answer (or failure to get one) seen by the fault suite. */
export interface Seen {
  /** ms since the epoch when the answer came. */
  at: number;
  /** What was called: `ingest`, or a probe's name. */
  what: string;
  /** HTTP status, or `refused` (no connection), `timeout`, `error`. */
  status: number | 'refused' | 'timeout' | 'error';
  /** The `Retry-After` header, when the answer had one. */
  retryAfter: string | null;
  /** The first 200 characters of the body of a 5xx answer. */
  detail?: string;
}

/** An ingest event as the client library sends it. */
type IngestEvent = { id: string; type: string; timestamp: string; body: Record<string, unknown> };

/** Events of each kind per batch: one `run.start` of a new run, `ACTIONS` `action.record` in it, `INTERVENTIONS` `intervention.create`. */
const ACTIONS = 9;
const INTERVENTIONS = 10;

/** Ids acknowledged by ingest, by what they should become in the read model. */
export interface Acked {
  interventions: Set<string>;
  actions: Set<string>;
  /** Acknowledged `run.start` events. */
  starts: Set<string>;
  /** Runs with at least one acknowledged run event (`run.start` or `action.record`). */
  runs: Set<string>;
}

/**
 * Call `url` and record the answer in `seen` (`timeoutMs` per call). Returns the answer's status and parsed body
 * (null when none).
 */
export async function probe(
  seen: Seen[],
  what: string,
  url: string,
  init: RequestInit = {},
  timeoutMs = 5000,
): Promise<{ status: Seen['status']; body: any; retryAfter: string | null }> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let body: any = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    const retryAfter = res.headers.get('retry-after');
    seen.push({ at: Date.now(), what, status: res.status, retryAfter, ...(res.status >= 500 ? { detail: text.slice(0, 200) } : {}) });
    return { status: res.status, body, retryAfter };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const status: Seen['status'] = e.name === 'TimeoutError' || e.name === 'AbortError' ? 'timeout' : e.cause?.code === 'ECONNREFUSED' || e.cause?.code === 'ECONNRESET' || /fetch failed/.test(e.message) ? 'refused' : 'error';
    seen.push({ at: Date.now(), what, status, retryAfter: null, detail: `${e.message} ${e.cause?.code ?? ''}`.trim() });
    return { status, body: null, retryAfter: null };
  }
}

/** A running ingest load; see the module comment. */
export interface Load {
  acked: Acked;
  /** Events sent at least once. */
  sent(): number;
  /** Events not yet acknowledged. */
  pending(): number;
  /**
   * Unacknowledged events that may nevertheless be stored: sent in a request that got no definite answer (a timeout,
   * a reset, a 5xx: ingest may have published them before the answer was lost), by kind.
   */
  maybeStored(): { interventions: number; actions: number };
  /** Send `batches` new batches at once (beyond the usual pace), so that a fault right after finds work in flight. */
  burst(batches: number): void;
  /** Stop making new batches; keep re-sending the unacknowledged events until all are acknowledged or `deadline` (ms since the epoch). */
  finish(deadline: number): Promise<void>;
}

/**
 * Start sending one batch of 20 events every `everyMs` (default 250 ms: 80 events/s), each to organisation of
 * `writeKey`, ids prefixed by `tag`. Answers go to `seen` as `ingest`; per-event errors inside a 207 go there as
 * `ingest-event` with the event's status.
 */
export function startLoad(opts: { url: string; writeKey: string; tag: string; seen: Seen[]; everyMs?: number; timeoutMs?: number }): Load {
  const everyMs = opts.everyMs ?? 250;
  const acked: Acked = { interventions: new Set(), actions: new Set(), starts: new Set(), runs: new Set() };
  const kindOf = new Map<string, { kind: 'intervention' | 'action' | 'run'; run?: string }>();
  const retry: Array<{ events: IngestEvent[]; notBefore: number }> = [];
  const uncertain = new Set<string>();
  let sent = 0;
  let unacked = 0;
  let batchNo = 0;
  let generating = true;
  let deadline = Number.POSITIVE_INFINITY;
  const inFlight = new Set<Promise<void>>();

  const newBatch = (): IngestEvent[] => {
    const b = batchNo++;
    const at = new Date().toISOString();
    const run = `${opts.tag}-run-${b}`;
    const agent = `${opts.tag}-agent`;
    const events: IngestEvent[] = [{ id: `${opts.tag}-${b}-s`, type: 'run.start', timestamp: at, body: { run_id: run, agent_id: agent, started_at: at } }];
    kindOf.set(events[0].id, { kind: 'run', run });
    for (let i = 0; i < ACTIONS; i++) {
      const id = `${opts.tag}-${b}-a${i}`;
      events.push({ id, type: 'action.record', timestamp: at, body: { run_id: run, agent_id: agent, action_name: `fault_action_${i % 3}`, status: 'success', cost_usd: 0.01, duration_ms: 5, timestamp: at } });
      kindOf.set(id, { kind: 'action', run });
    }
    for (let i = 0; i < INTERVENTIONS; i++) {
      const id = `${opts.tag}-${b}-i${i}`;
      events.push({ id, type: 'intervention.create', timestamp: at, body: { type: 'hard_block', outcome: 'blocked', action_name: 'delete_records', agent_id: agent, run_id: opts.tag, risk_level: 'high', estimated_cost_usd: 1 } });
      kindOf.set(id, { kind: 'intervention' });
    }
    sent += events.length;
    unacked += events.length;
    return events;
  };

  const ack = (id: string) => {
    const k = kindOf.get(id);
    if (!k) return;
    const set = k.kind === 'intervention' ? acked.interventions : k.kind === 'action' ? acked.actions : acked.starts;
    if (set.has(id)) return;
    unacked -= 1;
    set.add(id);
    if (k.run) acked.runs.add(k.run);
  };

  const send = async (events: IngestEvent[]) => {
    const r = await probe(
      opts.seen,
      'ingest',
      `${opts.url}/api/v1/ingest/`,
      { method: 'POST', headers: { authorization: `Bearer ${opts.writeKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ batch: events }) },
      opts.timeoutMs ?? 10_000,
    );
    const again: IngestEvent[] = [];
    let wait = 500;
    if (r.status === 207 && r.body && Array.isArray(r.body.successes)) {
      for (const s of r.body.successes as Array<{ id: string; status: number }>) if (s.status === 201 || s.status === 200) ack(s.id);
      const failed = new Set<string>();
      for (const e of (r.body.errors ?? []) as Array<{ id: string; status: number; message?: string }>) {
        opts.seen.push({ at: Date.now(), what: 'ingest-event', status: e.status, retryAfter: null, detail: e.message?.slice(0, 200) });
        failed.add(e.id);
      }
      for (const ev of events) if (failed.has(ev.id)) again.push(ev);
    } else {
      again.push(...events);
      if (r.status !== 'refused' && !(typeof r.status === 'number' && r.status < 500)) for (const ev of events) uncertain.add(ev.id);
      const ra = Number(r.retryAfter);
      if (Number.isFinite(ra) && ra > 0) wait = Math.min(2000, ra * 1000);
    }
    if (again.length) retry.push({ events: again, notBefore: Date.now() + wait });
  };

  const track = (p: Promise<void>) => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };

  let timer: NodeJS.Timeout | null = null;
  const tick = () => {
    const now = Date.now();
    // At most 4 requests in flight (a slow or hanging gateway must not pile up requests).
    for (let i = 0; i < retry.length && inFlight.size < 4; ) {
      if (retry[i].notBefore <= now) track(send(retry.splice(i, 1)[0].events));
      else i++;
    }
    if (generating && inFlight.size < 4) track(send(newBatch()));
    if (!generating && (unacked === 0 || Date.now() > deadline)) return;
    timer = setTimeout(tick, everyMs);
  };
  tick();

  return {
    acked,
    burst(batches) {
      for (let i = 0; i < batches; i++) track(send(newBatch()));
    },
    sent: () => sent,
    maybeStored() {
      const out = { interventions: 0, actions: 0 };
      for (const id of uncertain) {
        const k = kindOf.get(id)?.kind;
        if (k === 'intervention' && !acked.interventions.has(id)) out.interventions++;
        if (k === 'action' && !acked.actions.has(id)) out.actions++;
      }
      return out;
    },
    pending: () => unacked,
    async finish(until) {
      generating = false;
      deadline = until;
      while ((unacked > 0 && Date.now() < until) || inFlight.size > 0) {
        if (unacked > 0 && !timer && inFlight.size === 0) tick();
        await new Promise((r) => setTimeout(r, 100));
        if (unacked === 0 && inFlight.size === 0) break;
      }
      if (timer) clearTimeout(timer);
      timer = null;
      await Promise.all([...inFlight]);
    },
  };
}

/** What the read model holds for one organisation's load, next to what ingest acknowledged. */
export interface ReadModelCount {
  /** `GET /api/v1/interventions?run_id=<tag>` total, and distinct acknowledged ids among its records when the records carry `ingest_event_id`. */
  listed: number;
  /** `GET /api/v1/interventions/stats` total_interventions. */
  statsInterventions: number;
  /** `GET /api/v1/stats/` total_actions and total_runs. */
  actions: number;
  runs: number;
  /** Sums of `GET /api/v1/stats/daily` actions and runs. */
  dailyActions: number;
  dailyRuns: number;
  /** Acknowledged interventions missing from the listed records (by `ingest_event_id`), or null when the records do not carry it. */
  missingIds: number | null;
  /** Listed records whose `ingest_event_id` appears more than once, or null as above. */
  repeatedIds: number | null;
}

/**
 * Read the read model of the load's organisation (read key `readKey`). With `acked`, also page through the listed
 * interventions to compare their `ingest_event_id`s with the acknowledged ids. Throws when an answer is not 200 (the
 * caller polls). The organisation holds only this load's events.
 */
export async function readModel(url: string, readKey: string, tag: string, acked?: Acked): Promise<ReadModelCount> {
  const get = async (path: string) => {
    const res = await fetch(url + path, { headers: { authorization: `Bearer ${readKey}` }, signal: AbortSignal.timeout(10_000) });
    if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}`);
    return (await res.json()) as any;
  };
  const [list, istats, stats, daily] = await Promise.all([
    get(`/api/v1/interventions?run_id=${encodeURIComponent(tag)}&limit=1`),
    get('/api/v1/interventions/stats'),
    get('/api/v1/stats/'),
    get('/api/v1/stats/daily'),
  ]);
  const count: ReadModelCount = {
    listed: list.total,
    statsInterventions: istats.total_interventions,
    actions: stats.total_actions,
    runs: stats.total_runs,
    dailyActions: (daily.days as Array<{ actions: number }>).reduce((s, d) => s + d.actions, 0),
    dailyRuns: (daily.days as Array<{ runs: number }>).reduce((s, d) => s + d.runs, 0),
    missingIds: null,
    repeatedIds: null,
  };
  if (acked) {
    const ids: string[] = [];
    for (let skip = 0; skip < list.total; skip += 1000) {
      const page = await get(`/api/v1/interventions?run_id=${encodeURIComponent(tag)}&limit=1000&skip=${skip}`);
      for (const r of page.interventions as Array<{ ingest_event_id?: string }>) if (r.ingest_event_id) ids.push(r.ingest_event_id);
    }
    if (ids.length === list.total) {
      const distinct = new Set(ids);
      count.repeatedIds = ids.length - distinct.size;
      count.missingIds = [...acked.interventions].filter((id) => !distinct.has(id)).length;
    }
  }
  return count;
}
