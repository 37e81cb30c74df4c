/**
 * Model prices that turn GenAI token usage into a cost estimate in USD for OTLP ingest. The default source is the
 * maintained price database `@pydantic/genai-prices` (its bundled data, version {@link GENAI_PRICES_SOURCE}: no
 * network access at run time); an operator's table, the JSON file `AGP_OTLP_PRICE_TABLE` names, comes first: its
 * entries win, models it lacks are priced from the database. Every priced action records which source, version and
 * model (and provider) priced it.
 * Source: docs/ingest.md (OTLP trace ingest, Cost); docs/configuration.md (AGP_OTLP_PRICE_TABLE); docs/decisions.md
 * (OTLP trace ingest: prices).
 */
import { readFileSync } from 'node:fs';
import type { PriceCalculation } from '@pydantic/genai-prices';
import { z } from 'zod';
import { UsdSchema } from '@agp/contracts';

/**
 * The price database and its version, as recorded in `outputs.pricing.price_source`. Equal to the installed package's
 * version (a unit test checks it): updating the dependency updates the prices and this string together.
 */
export const GENAI_PRICES_SOURCE = 'genai-prices@0.1.8';

/** The price database's module, once {@link loadPriceDatabase} has loaded it. */
let database: typeof import('@pydantic/genai-prices') | null = null;

/**
 * Load the price database (once; later calls resolve at once). It is loaded on the first OTLP export, not at start:
 * importing it costs ~44 ms and ~17 MB of RSS, which a platform that never receives OTLP traces should not pay
 * (docs/decisions.md, OTLP trace ingest: prices). {@link priceCall} needs it loaded.
 */
export async function loadPriceDatabase(): Promise<void> {
  database ??= await import('@pydantic/genai-prices');
}

/** One model's price: USD per 1 million input (prompt) and output (completion) tokens. */
export const ModelPriceSchema = z.strictObject({ input_usd_per_1m: UsdSchema, output_usd_per_1m: UsdSchema });
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/**
 * An operator's price table: its `version` (recorded on every action priced with it), an optional description, and
 * the price of each model by name (the provider's model name without a date suffix: `gpt-4o`, `claude-sonnet-4-5`).
 */
export const PriceTableSchema = z.strictObject({
  version: z.string().min(1).max(128),
  description: z.string().max(10_000).optional(),
  models: z.record(z.string().min(1).max(256), ModelPriceSchema),
});
export type PriceTable = z.infer<typeof PriceTableSchema>;

/**
 * The operator's price table at `path` (`AGP_OTLP_PRICE_TABLE`), or null when `path` is unset (the price database
 * alone prices).
 * @throws Error naming the file and each bad field when it cannot be read or is not a price table (the process
 *   should not start with a table it cannot use).
 */
export function loadPriceTable(path?: string): PriceTable | null {
  if (!path) return null;
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
 * out, the longest entry that the name starts with followed by `-` and a digit, i.e. a dated or versioned name of it
 * (`gpt-4o-2024-08-06` → `gpt-4o`, `gpt-4o-mini-2024-07-18` → `gpt-4o-mini`, but `gpt-4o-mini` is not `gpt-4o`: the
 * table's entries come before the price database, which knows `gpt-4o-mini` itself); case-insensitive. Null when none
 * matches. Pure.
 */
export function priceOf(table: PriceTable, model: string): PriceMatch | null {
  const name = model.toLowerCase().slice(model.lastIndexOf('/') + 1);
  let best: PriceMatch | null = null;
  for (const [key, price] of Object.entries(table.models)) {
    const k = key.toLowerCase();
    if (k === name) return { model: key, price };
    if (name.startsWith(`${k}-`) && /\d/.test(name.charAt(k.length + 1)) && (!best || key.length > best.model.length)) best = { model: key, price };
  }
  return best;
}

/** A single call's USD rounded to 1e-10: finer than `roundUsd`'s micro-dollar, which would zero a call of a few tokens; removes float noise only. Pure. */
const roundCallUsd = (usd: number) => Math.round(usd * 1e10) / 1e10;

/** Cost in USD of `inputTokens` and `outputTokens` at `price`, rounded to 1e-10 USD (no float noise). Pure. */
export function tokenCostUsd(price: ModelPrice, inputTokens: number, outputTokens: number): number {
  return roundCallUsd((inputTokens * price.input_usd_per_1m + outputTokens * price.output_usd_per_1m) / 1e6);
}

/** A model call to price: the model name, `gen_ai.provider.name` when the span has one, token counts, when it ran. */
export interface ModelCall {
  model: string;
  provider?: string;
  inputTokens?: number;
  outputTokens?: number;
  /** When the call started: the database prices by the date (a model whose price changed is priced as it was then). */
  at: Date;
}

/**
 * What pricing a model call gives: the cost in USD (absent when the model is unpriced or the span has no token count)
 * and the `outputs.pricing` record of what was used.
 */
export interface CallPricing {
  cost_usd?: number;
  pricing: Record<string, unknown>;
}

/** A database rate as recorded: a number of USD per 1M tokens, or `{base, tiers: [{start, price}]}` when it is tiered. */
function rate(v: unknown): unknown {
  return v !== null && typeof v === 'object' ? JSON.parse(JSON.stringify(v)) : v;
}

/**
 * The database's price of a call: with the span's provider when the database knows that provider (`openai`,
 * `anthropic`, `gcp.gemini` → google, `aws.bedrock` → aws, …), else with the model prefix of `openai/gpt-4o` as the
 * provider, else matched on the model name alone. Null when the database has no price for it.
 */
function databasePrice(call: ModelCall): PriceCalculation | null {
  if (database === null) throw new Error('the price database is not loaded: await loadPriceDatabase() first');
  const { calcPrice, findProvider } = database;
  const slash = call.model.lastIndexOf('/');
  const name = call.model.slice(slash + 1);
  const prefix = slash > 0 ? call.model.slice(0, slash) : undefined;
  const provider = [call.provider, prefix].find((p) => p !== undefined && findProvider({ providerId: p }) !== undefined);
  const usage = { ...(call.inputTokens !== undefined ? { input_tokens: call.inputTokens } : {}), ...(call.outputTokens !== undefined ? { output_tokens: call.outputTokens } : {}) };
  try {
    return calcPrice(usage, name, { ...(provider ? { providerId: provider } : {}), timestamp: call.at });
  } catch {
    return null; // a database entry it cannot evaluate prices nothing, like an unknown model
  }
}

/**
 * Price one model call: the operator's table first (its entry for the model, matched by {@link priceOf}), else the
 * price database {@link GENAI_PRICES_SOURCE}. A call without token counts gets no cost; a model neither knows gets no
 * cost and a `pricing.unpriced` reason (the action is still recorded). `pricing` holds `price_source`
 * (`AGP_OTLP_PRICE_TABLE` or `genai-prices@<version>`), `price_table_version` (the operator's table),
 * `price_provider` (the database's provider id), `price_model` (the entry that matched) and the two rates in USD per
 * 1M tokens (a database rate may be tiered: `{base, tiers}`). Pure (the database is the bundled data).
 * @throws Error when the price database is not loaded and the table does not price the model ({@link loadPriceDatabase}).
 */
export function priceCall(table: PriceTable | null, call: ModelCall): CallPricing {
  const hasTokens = call.inputTokens !== undefined || call.outputTokens !== undefined;
  const own = table ? priceOf(table, call.model) : null;
  if (table && own) {
    const pricing = { price_source: 'AGP_OTLP_PRICE_TABLE', price_table_version: table.version, price_model: own.model, input_usd_per_1m: own.price.input_usd_per_1m, output_usd_per_1m: own.price.output_usd_per_1m };
    return { pricing, ...(hasTokens ? { cost_usd: tokenCostUsd(own.price, call.inputTokens ?? 0, call.outputTokens ?? 0) } : {}) };
  }
  const db = databasePrice(call);
  if (db) {
    const pricing = {
      price_source: GENAI_PRICES_SOURCE,
      price_provider: db.provider.id,
      price_model: db.model.id,
      ...(db.model_price.input_mtok !== undefined ? { input_usd_per_1m: rate(db.model_price.input_mtok) } : {}),
      ...(db.model_price.output_mtok !== undefined ? { output_usd_per_1m: rate(db.model_price.output_mtok) } : {}),
    };
    return { pricing, ...(hasTokens ? { cost_usd: roundCallUsd(db.total_price) } : {}) };
  }
  const where = `${table ? `AGP_OTLP_PRICE_TABLE ${table.version} or ` : ''}${GENAI_PRICES_SOURCE}`;
  return { pricing: { price_source: where, unpriced: `no price for model ${call.model}${call.provider ? ` (provider ${call.provider})` : ''} in ${where}` } };
}
