/**
 * The versioned model price table that turns GenAI token usage into a cost estimate in USD for OTLP ingest. The
 * platform ships one (./prices.json); an operator replaces it with `AGP_OTLP_PRICE_TABLE`, the path of a JSON file of
 * the same shape. Source: docs/ingest.md (OTLP trace ingest, Cost); docs/operations.md (OTLP trace ingest).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { UsdSchema } from '@agp/contracts';
import shipped from './prices.json' with { type: 'json' };

/** One model's price: USD per 1 million input (prompt) and output (completion) tokens. */
export const ModelPriceSchema = z.strictObject({ input_usd_per_1m: UsdSchema, output_usd_per_1m: UsdSchema });
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/**
 * A price table: its `version` (recorded on every action priced with it), an optional description, and the price of
 * each model by name (the provider's model name without a date suffix: `gpt-4o`, `claude-sonnet-4-5`).
 */
export const PriceTableSchema = z.strictObject({
  version: z.string().min(1).max(128),
  description: z.string().max(10_000).optional(),
  models: z.record(z.string().min(1).max(256), ModelPriceSchema),
});
export type PriceTable = z.infer<typeof PriceTableSchema>;

/** The table shipped with the platform. */
export const SHIPPED_PRICE_TABLE: PriceTable = PriceTableSchema.parse(shipped);

/**
 * The price table at `path` (`AGP_OTLP_PRICE_TABLE`), or the shipped one when `path` is unset.
 * @throws Error naming the file and each bad field when it cannot be read or is not a price table (the process
 *   should not start with a table it cannot use).
 */
export function loadPriceTable(path?: string): PriceTable {
  if (!path) return SHIPPED_PRICE_TABLE;
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`AGP_OTLP_PRICE_TABLE: cannot read ${path} as JSON: ${(err as Error).message}`);
  }
  const parsed = PriceTableSchema.safeParse(doc);
  if (!parsed.success) throw new Error(`AGP_OTLP_PRICE_TABLE: ${path} is not a price table: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** The price a table gives a model, with the table entry's name. */
export interface PriceMatch {
  /** The table's model name that matched. */
  model: string;
  price: ModelPrice;
}

/**
 * The price of `model` in `table`: the entry of the same name; else, with a provider prefix (`openai/gpt-4o`) left
 * out, the longest entry that the name starts with followed by `-` (`gpt-4o-2024-08-06` → `gpt-4o`,
 * `gpt-4o-mini-2024-07-18` → `gpt-4o-mini`); case-insensitive. Null when none matches. Pure.
 */
export function priceOf(table: PriceTable, model: string): PriceMatch | null {
  const name = model.toLowerCase().slice(model.lastIndexOf('/') + 1);
  let best: PriceMatch | null = null;
  for (const [key, price] of Object.entries(table.models)) {
    const k = key.toLowerCase();
    if (k === name) return { model: key, price };
    if (name.startsWith(`${k}-`) && (!best || key.length > best.model.length)) best = { model: key, price };
  }
  return best;
}

/** Cost in USD of `inputTokens` and `outputTokens` at `price`, rounded to 1e-10 USD (no float noise). Pure. */
export function tokenCostUsd(price: ModelPrice, inputTokens: number, outputTokens: number): number {
  return Math.round(((inputTokens * price.input_usd_per_1m + outputTokens * price.output_usd_per_1m) / 1e6) * 1e10) / 1e10;
}
