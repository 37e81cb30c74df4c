/**
 * The support agent's tools: their definitions as the agent registry takes them (name, description, JSON Schema of
 * the arguments, risk level, typical cost in USD), and in-memory stand-ins for the systems they would call (order
 * database, ticketing, payments, email). The stand-ins count what really ran, so the example can show that a stopped
 * call never reached the system, and that a replayed email was sent once.
 */
import type { ActionDefinition } from '@agp/sdk';

const obj = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required, additionalProperties: false });
const str = { type: 'string', minLength: 1 };

/** The actions the agent registers with `Governor.connect({ actions })`; `act` checks arguments against them. */
export const ACTIONS: ActionDefinition[] = [
  { name: 'lookup_order', description: 'Read an order and its shipping status', risk_level: 'low', typical_cost_usd: 0.001, parameters: obj({ order_id: str }, ['order_id']) },
  { name: 'check_ticket_status', description: "Read a support ticket's status", risk_level: 'low', typical_cost_usd: 0.001, parameters: obj({ ticket_id: str }, ['ticket_id']) },
  { name: 'add_ticket_note', description: 'Add an internal note to a ticket', risk_level: 'low', typical_cost_usd: 0.001, parameters: obj({ ticket_id: str, note: str }, ['ticket_id', 'note']) },
  { name: 'send_email', description: 'Email the customer', risk_level: 'medium', typical_cost_usd: 0.002, parameters: obj({ to: str, subject: str, body: str }, ['to', 'subject', 'body']) },
  { name: 'issue_refund', description: 'Refund (part of) an order, in USD', risk_level: 'high', typical_cost_usd: 0.01, parameters: obj({ order_id: str, amount: { type: 'number', exclusiveMinimum: 0 }, reason: str }, ['order_id', 'amount', 'reason']) },
  { name: 'close_account', description: "Close the customer's account", risk_level: 'high', typical_cost_usd: 0.005, parameters: obj({ customer_id: str, reason: str }, ['customer_id', 'reason']) },
  { name: 'delete_customer_data', description: "Erase every record of the customer", risk_level: 'critical', typical_cost_usd: 0.005, parameters: obj({ customer_id: str }, ['customer_id']) },
  { name: 'book_specialist_callback', description: 'Book a paid callback by a human specialist', risk_level: 'medium', typical_cost_usd: 12, parameters: obj({ customer_id: str, topic: str }, ['customer_id', 'topic']) },
];

/** What the stand-in systems did (only calls that were allowed to run reach them). */
export const ran: Record<string, number> = {};
const count = (name: string) => (ran[name] = (ran[name] ?? 0) + 1);
let seq = 0;

/** The tools' implementations: `run.act(name, args, TOOLS[name])` runs one only when the platform's policies allow it. */
export const TOOLS: Record<string, (args: any) => Promise<unknown>> = {
  async lookup_order({ order_id }: { order_id: string }) {
    count('lookup_order');
    return { order_id, status: 'shipped', carrier: 'DHL', eta_days: 2, total_usd: 250 };
  },
  async check_ticket_status({ ticket_id }: { ticket_id: string }) {
    count('check_ticket_status');
    return { ticket_id, status: 'waiting on the warehouse' };
  },
  async add_ticket_note({ ticket_id }: { ticket_id: string }) {
    count('add_ticket_note');
    return { ticket_id, note_id: `note-${++seq}` };
  },
  async send_email({ to }: { to: string }) {
    count('send_email');
    return { message_id: `msg-${++seq}`, to };
  },
  async issue_refund({ order_id, amount }: { order_id: string; amount: number }) {
    count('issue_refund');
    return { refund_id: `re-${++seq}`, order_id, amount_usd: amount };
  },
  async close_account({ customer_id }: { customer_id: string }) {
    count('close_account');
    return { customer_id, closed: true };
  },
  async delete_customer_data({ customer_id }: { customer_id: string }) {
    count('delete_customer_data');
    return { customer_id, erased: true };
  },
  async book_specialist_callback({ customer_id }: { customer_id: string }) {
    count('book_specialist_callback');
    return { customer_id, booking_id: `cb-${++seq}` };
  },
};
