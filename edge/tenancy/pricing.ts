/**
 * The price table: per model, what a million tokens cost (input prefilled, cached input — Frontier's
 * reused KV — and output), in micro-units of one currency. A turn's cost is its usage priced by the
 * table version that admitted it, in nano-units (1e-9), rounded once per turn: reports add integers.
 * The model `*` prices every model without a row of its own; a model with neither costs nothing.
 */

export interface ModelPrice {
  /** Micro-units per million prefilled input tokens. */
  inputMicro: number;
  cachedInputMicro: number;
  outputMicro: number;
}

export interface PriceTable {
  /** 0: no price was ever set. */
  version: number;
  currency: string;
  prices: Record<string, ModelPrice>;
}

/** The priced usage of one turn. */
export interface TokenUsage {
  prefilled: number;
  cached: number;
  output: number;
}

export const EMPTY_PRICES: PriceTable = { version: 0, currency: "usd", prices: {} };
export const DEFAULT_PRICE_MODEL = "*";

export function priceFor(table: PriceTable, model: string): ModelPrice | undefined {
  return table.prices[model] ?? table.prices[DEFAULT_PRICE_MODEL];
}

/** nano-units = tokens × micro-units per million / 1000. */
export function costNano(price: ModelPrice | undefined, usage: TokenUsage): number {
  if (!price) return 0;
  const micro =
    usage.prefilled * price.inputMicro + usage.cached * price.cachedInputMicro + usage.output * price.outputMicro;
  return Math.round(micro / 1000);
}

/** The most a turn of `input` prompt tokens and `output` tokens can cost (every prompt token at the dearer input price). */
export function boundNano(price: ModelPrice | undefined, input: number, output: number): number {
  if (!price) return 0;
  const dearer = Math.max(price.inputMicro, price.cachedInputMicro);
  return Math.ceil((input * dearer + output * price.outputMicro) / 1000);
}

/** Currency amounts as the admin API shows them (units, not nano-units). */
export function units(nano: number): number {
  return nano / 1e9;
}
