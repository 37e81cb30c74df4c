/**
 * Interventions (`/interventions`): `GET /api/v1/interventions` with every filter the API has (type, outcome,
 * action_name, agent_id, run_id, policy_id, risk_level, start_date, end_date), all in the URL, paged server-side
 * (skip / limit). Each row links to its detail view. Source: spec §Interventions, List query parameters.
 */
import { PageHeader } from '../../components/PageHeader.js';
import { INTERVENTION_OUTCOMES, INTERVENTION_TYPES, RISK_LEVELS, type InterventionRecord } from '../../api/types.js';
import type { FilterField } from '../../components/FilterBar.js';
import { FilteredList } from '../../components/FilteredList.js';
import { usd } from '../../components/format.js';
import { Tag } from '../../components/Tag.js';
import { Time, Truncate } from '../../components/Cells.js';

const FIELDS: FilterField[] = [
  { name: 'type', label: 'Type', kind: 'select', options: INTERVENTION_TYPES },
  { name: 'outcome', label: 'Outcome', kind: 'select', options: INTERVENTION_OUTCOMES },
  { name: 'risk_level', label: 'Risk level', kind: 'select', options: RISK_LEVELS },
  { name: 'action_name', label: 'Action', kind: 'text', placeholder: 'exact name' },
  { name: 'agent_id', label: 'Agent', kind: 'text' },
  { name: 'run_id', label: 'Run', kind: 'text' },
  { name: 'policy_id', label: 'Policy id', kind: 'text' },
  { name: 'start_date', label: 'From', kind: 'date' },
  { name: 'end_date', label: 'To', kind: 'date' },
];

/** The interventions list. */
export function InterventionsPage() {
  return (
    <>
      <PageHeader title="Interventions">What the guardrails did to the actions agents attempted, newest first.</PageHeader>
      <FilteredList<InterventionRecord>
        path="/api/v1/interventions"
        rowsKey="interventions"
        fields={FIELDS}
        what="interventions"
        empty="No interventions match these filters."
        rowKey={(r) => r.id}
        rowHref={(r) => `/interventions/${encodeURIComponent(r.id)}`}
        columns={[
          { key: 'action', header: 'Action', cell: (r) => <Truncate text={r.action_name} /> },
          { key: 'type', header: 'Type', cell: (r) => <Tag value={r.type} /> },
          { key: 'outcome', header: 'Outcome', cell: (r) => <Tag value={r.outcome} /> },
          { key: 'risk', header: 'Risk', cell: (r) => <Tag value={r.risk_level} /> },
          { key: 'agent', header: 'Agent', cell: (r) => <Truncate text={r.agent_id} width="name" /> },
          { key: 'policy', header: 'Policy', fill: true, cell: (r) => <Truncate text={r.policy_name ?? r.policy_id} width="fill" /> },
          { key: 'prevented', header: 'Cost prevented', cell: (r) => usd(r.cost_prevented_usd), numeric: true },
          { key: 'reason', header: 'Reason', fill: true, cell: (r) => <Truncate text={r.reason} width="fill" /> },
          { key: 'time', header: 'Time', cell: (r) => <Time iso={r.timestamp} /> },
        ]}
      />
    </>
  );
}
