#!/usr/bin/env bash
# The AGP walkthrough, runnable: every step of docs/walkthrough.md, in order, against a fresh `npm run quickstart`.
# Run it from anywhere while the platform runs: bash examples/walkthrough.sh
# It prints what docs/walkthrough.md says it prints (test/e2e/walkthrough.test.ts runs it and checks every figure).
set -euo pipefail
cd "$(dirname "$0")/.."   # the repository root: `npx agp` and ./examples resolve from here

# The three variables every step uses. The defaults are what the quickstart gives: the platform on port 8080 and the
# write and read keys its first start printed, which it also saved to first-run-keys.json in the data folder.
AGP_URL=${AGP_URL:-http://127.0.0.1:8080}
KEYS_FILE=${AGP_DATA_DIR:-.agp/data}/first-run-keys.json
if [ -z "${WRITE_KEY:-}${READ_KEY:-}" ] && [ ! -f "$KEYS_FILE" ]; then
  echo "no $KEYS_FILE: start the platform first (npm run quickstart), or set WRITE_KEY and READ_KEY" >&2; exit 1
fi
WRITE_KEY=${WRITE_KEY:-$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1])).write' "$KEYS_FILE")}
READ_KEY=${READ_KEY:-$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1])).read' "$KEYS_FILE")}

# Shorthands: the two keys' headers, the JSON content type, and dates the filters use (UTC, YYYY-MM-DD).
R="Authorization: Bearer $READ_KEY"; W="Authorization: Bearer $WRITE_KEY"; J='content-type: application/json'
SINCE=$(node -p 'new Date(Date.now() - 7 * 86400e3).toISOString().slice(0, 10)')   # 7 days ago
TODAY=$(node -p 'new Date().toISOString().slice(0, 10)')
TMP=$(mktemp -d)   # the files the steps write (ledger.csv, the eval scenarios and results)

# json PATH... : print fields of the JSON on stdin, one line, `path=value` (a single PATH prints the bare value).
json() {
  node -e '
    const j = JSON.parse(require("fs").readFileSync(0, "utf8"));
    const paths = process.argv.slice(1);
    const at = (p) => { const v = new Function("j", "return j." + p)(j); return typeof v === "string" ? v : JSON.stringify(v); };
    console.log(paths.length === 1 ? at(paths[0]) : paths.map((p) => `${p}=${at(p)}`).join("  "));
  ' "$@"
}
step() { printf '\n== %s\n' "$*"; }

step "0. The platform at $AGP_URL"
curl -sf "$AGP_URL/readyz" | json status

step "1. Simulate a fleet through the public ingest API"
npx agp simulate --url "$AGP_URL" --key "$WRITE_KEY" --agents 8 --rate 500 --duration 4 --backfill-days 7 --seed 42 --quiet \
  | tee "$TMP/simulate.txt"
# Ingest answers once the events are durable; the read models follow within moments. Wait until they hold every one.
ACTIONS=$(grep -o 'action.record [0-9]*' "$TMP/simulate.txt" | cut -d' ' -f2)
INTERVENTIONS=$(grep -o 'intervention.create [0-9]*' "$TMP/simulate.txt" | cut -d' ' -f2)
caught_up() {
  [ "$(curl -s -H "$R" "$AGP_URL/api/v1/stats/" | json total_actions)" = "$ACTIONS" ] &&
    [ "$(curl -s -H "$R" "$AGP_URL/api/v1/interventions?limit=1" | json total)" = "$INTERVENTIONS" ]
}
for _ in $(seq 120); do caught_up && break; sleep 0.5; done
caught_up || { echo "the read models did not catch up within a minute" >&2; exit 1; }
echo "queryable: $ACTIONS ledger entries, $INTERVENTIONS interventions"

step "2. Interventions: newest first, filters that compose"
curl -s -H "$R" "$AGP_URL/api/v1/interventions?limit=5" | json total 'interventions.length'
curl -s -H "$R" "$AGP_URL/api/v1/interventions?type=hard_block,pii_blocked&risk_level=critical&limit=3" | json total
curl -s -H "$R" "$AGP_URL/api/v1/interventions?outcome=escalated&start_date=$SINCE&end_date=$TODAY" | json total

step "3. One intervention with its audit trail, and the statistics"
ID=$(curl -s -H "$R" "$AGP_URL/api/v1/interventions?limit=1" | json 'interventions[0].id')
curl -s -H "$R" "$AGP_URL/api/v1/interventions/$ID" | json 'audit_trail[0].event' enrichment_status
curl -s -H "$R" "$AGP_URL/api/v1/interventions/stats" | json total_interventions 'by_outcome.blocked' cost_prevented_usd

step "4. Runs, and one run with its ledger entries"
curl -s -H "$R" "$AGP_URL/api/v1/runs?status=completed&min_cost=0.5&limit=3" | json total
RUN=$(curl -s -H "$R" "$AGP_URL/api/v1/runs?status=completed&agent_id=billing-agent-1&limit=1" | json 'runs[0].id')
curl -s -H "$R" "$AGP_URL/api/v1/runs/$RUN" | json agent_id status action_count 'actions.length' cost_usd estimated_cost_usd

step "5. The action ledger, streamed as CSV or JSON Lines"
curl -s -H "$R" "$AGP_URL/api/v1/ledger/export?format=csv&start_date=$SINCE" -o "$TMP/ledger.csv"
echo "ledger.csv: $(wc -l < "$TMP/ledger.csv") lines"
curl -s -H "$R" "$AGP_URL/api/v1/ledger/export?format=jsonl&agent_id=billing-agent-1" -o "$TMP/billing.jsonl"
head -1 "$TMP/billing.jsonl" | json agent_id action_name

step "6. Stats: totals, the daily series, estimation accuracy"
curl -s -H "$R" "$AGP_URL/api/v1/stats/" | json total_runs total_actions total_cost_usd total_estimated_cost_usd total_actual_cost_usd
curl -s -H "$R" "$AGP_URL/api/v1/stats/daily" | json 'days.length'
curl -s -H "$R" "$AGP_URL/api/v1/stats/estimation-accuracy" | json actions_compared

step "7. The agent registry and one agent's stats"
curl -s -H "$R" "$AGP_URL/api/v1/agents?limit=2" | json total 'agents.map((a) => a.agent_id)'
curl -s -H "$R" "$AGP_URL/api/v1/agents/billing-agent-1/stats" | json total_runs total_actions

step "8. Policies are versioned"
POLICY=$(curl -s -X POST -H "$W" -H "$J" "$AGP_URL/api/v1/policies" \
  -d '{"name":"Refund guard","run_budget":50,"denied_actions":["delete_records"],"approval_required_actions":["refund_payment"],"rate_limits":{"send_email":{"max_calls":20,"window_seconds":60}},"agent_ids":["billing-agent-1"]}' \
  | json id)
curl -s -X PATCH -H "$W" -H "$J" -H 'If-Match: "1"' -d '{"run_budget":75}' "$AGP_URL/api/v1/policies/$POLICY" | json version run_budget
curl -s -X PATCH -H "$W" -H "$J" -d '{"enabled":false}' "$AGP_URL/api/v1/policies/$POLICY" | json version enabled
curl -s -H "$R" "$AGP_URL/api/v1/policies/$POLICY?version=1" | json version run_budget
curl -s -H "$R" "$AGP_URL/api/v1/policies/$POLICY/history" | json 'history.map((h) => h.event)'

step "9. Kill switches: stop one agent, then release it"
curl -s -X PUT -H "$W" -H "$J" -d '{"engaged":true,"reason":"refund loop under investigation"}' \
  "$AGP_URL/api/v1/kill-switches/agents/billing-agent-1" | json engaged reason
curl -s -H "$R" "$AGP_URL/api/v1/kill-switches" | json 'organization.engaged' 'agents.length'
curl -s -X PUT -H "$W" -H "$J" -d '{"engaged":false,"reason":"fixed"}' "$AGP_URL/api/v1/kill-switches/agents/billing-agent-1" | json engaged

step "10. Approvals: the pending inbox; approve one; a second decision is a 409"
curl -s -H "$R" "$AGP_URL/api/v1/approvals?status=pending&limit=2" | json total
APR=$(curl -s -H "$R" "$AGP_URL/api/v1/approvals?status=pending&limit=1" | json 'approvals[0].id')
curl -s -X POST -H "$W" -H "$J" -d '{"approver_email":"oncall@example.com","notes":"checked with the customer"}' \
  "$AGP_URL/api/v1/approvals/$APR/approve" | json status
curl -s -o /dev/null -w '%{http_code}\n' -X POST -H "$W" -H "$J" -d '{"approver_email":"oncall@example.com"}' \
  "$AGP_URL/api/v1/approvals/$APR/reject"

step "11. Record one intervention synchronously, then delete one"
curl -s -X POST -H "$W" -H "$J" "$AGP_URL/api/v1/interventions" \
  -d '{"type":"hard_block","outcome":"blocked","action_name":"delete_records","agent_id":"agent-7","estimated_cost_usd":120}' \
  | json type outcome agent_id
curl -s -o /dev/null -w '%{http_code}\n' -X DELETE -H "$W" "$AGP_URL/api/v1/interventions/$ID"

step "12. Errors are problem details naming each bad field; a read key cannot write"
curl -s -H "$R" "$AGP_URL/api/v1/interventions?outcome=maybe&limit=5000" | json status 'errors.map((e) => e.path)'
curl -s -H "$R" "$AGP_URL/api/v1/ledger/export?format=xml" | json status detail
curl -s -X POST -H "$R" -H "$J" -d '{"approver_email":"me@example.com"}' "$AGP_URL/api/v1/approvals/$APR/approve" | json status

step "13. The tool gateway: the same tools, resources and prompts as the MCP endpoint"
curl -s -H "$R" "$AGP_URL/api/v1/mcp/tools" | json 'tools.length'
curl -s -H "$R" -H "$J" "$AGP_URL/api/v1/mcp/call" -d '{"tool_name":"list_runs","arguments":{"status":"failed","limit":5}}' \
  | json success 'data.total'
curl -s -H "$R" "$AGP_URL/api/v1/mcp/resources/platform://stats/dashboard" | json 'data.total_runs'
curl -s -H "$R" -H "$J" "$AGP_URL/api/v1/mcp/prompts/analyze_agent_costs" -d '{"arguments":{"agent_id":"billing-agent-1"}}' \
  | json 'data.summary'
curl -s -H "$R" -H "$J" "$AGP_URL/api/v1/mcp/call" \
  -d '{"tool_name":"set_kill_switch","arguments":{"scope":"organization","engaged":true,"reason":"test"}}' | json success 'error.code'

step "14. Evals: generate attacks, run them against the policies, gate the build"
curl -s -X POST -H "$W" -H "$J" "$AGP_URL/api/v1/agents" -d '{"agent_id":"invoice-bot","name":"Invoice bot","actions":[
  {"name":"lookup_invoice","description":"Read an invoice","risk_level":"low","typical_cost_usd":0.01},
  {"name":"refund_invoice","description":"Refund an invoice; needs lookup_invoice first","risk_level":"high","typical_cost_usd":5},
  {"name":"delete_records","description":"Delete customer records","risk_level":"critical"}]}' | json agent_id 'actions.length'
curl -s -X POST -H "$W" -H "$J" "$AGP_URL/api/v1/policies" \
  -d '{"name":"invoice guard","denied_actions":["delete_records"],"run_budget":20,"agent_ids":["invoice-bot"]}' | json name
curl -s -X POST -H "$W" -H "$J" "$AGP_URL/api/v1/evals/generate-scenarios" \
  -d '{"agent_id":"invoice-bot","max_per_category":5,"seed":42}' -o "$TMP/generated.json"
json 'scenarios.length' counts_by_category < "$TMP/generated.json"
npx agp evals run --scenarios "$TMP/generated.json" --out "$TMP/results.json" --url "$AGP_URL" --key "$WRITE_KEY"
gate=0
npx agp evals gate --results "$TMP/results.json" --threshold 0.95 --upload --url "$AGP_URL" --api-key "$WRITE_KEY" || gate=$?
echo "agp evals gate exited $gate"
curl -s -H "$R" "$AGP_URL/api/v1/evals/latest?agent_id=invoice-bot" | json 'summary.grade' 'summary.block_rate'

step "15. Replay: a simulated run's bundle, replayed locally and submitted"
curl -s -H "$R" "$AGP_URL/api/v1/replay/$RUN/bundle" | json bundle_version 'actions.length'
npx agp replay "$RUN" --url "$AGP_URL" --key "$WRITE_KEY" --handlers ./examples/replay-handlers.mjs
RUN2=$(curl -s -H "$R" "$AGP_URL/api/v1/ledger/export?format=jsonl" | grep '"generate_report"' | tail -1 | json run_id)
npx agp replay "$RUN2" --url "$AGP_URL" --key "$WRITE_KEY" --handlers ./examples/replay-handlers.mjs
curl -s -H "$R" "$AGP_URL/api/v1/replay/history/" | json aggregates
curl -s -H "$R" "$AGP_URL/api/v1/replay/$RUN/analysis" | json 'aggregates.submissions' divergence_rate

step "16. Counterfactual: what today's policies, or a stricter one, would have decided"
curl -s -X POST -H "$R" -H "$J" "$AGP_URL/api/v1/replay/$RUN/evaluate" -d '{}' | json 'totals.steps' 'totals.prevented_usd'
GUARD=$(curl -s -H "$R" "$AGP_URL/api/v1/policies?agent_id=billing-agent-1&enabled=true&limit=1" | json 'policies[0].id')
curl -s -H "$R" "$AGP_URL/api/v1/policies/$GUARD" | json name run_budget
curl -s -X POST -H "$W" -H "$J" "$AGP_URL/api/v1/replay/evaluate" \
  -d "{\"agent_id\":\"billing-agent-1\",\"start_date\":\"$SINCE\",\"policy_patch\":{\"policy_id\":\"$GUARD\",\"patch\":{\"run_budget\":0.05}}}" \
  | json runs_matched 'totals.steps' 'totals.by_decision.budget_exceeded' 'totals.actually_spent_usd' 'totals.prevented_usd'

rm -rf "$TMP"
echo
echo "walkthrough complete"
