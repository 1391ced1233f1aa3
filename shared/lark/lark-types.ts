/** The expression tree and errors of the served Lark subset (shared/lark-grammar.ts). */

export type LarkExpr =
  | { k: "lit"; text: string }
  | { k: "class"; neg: boolean; ranges: [number, number][] }
  | { k: "ref"; name: string }
  | { k: "seq"; items: LarkExpr[] }
  | { k: "alt"; alts: LarkExpr[] }
  | { k: "rep"; node: LarkExpr; min: number; max: number };

export interface LarkGrammar {
  rules: Map<string, LarkExpr>;
}

/** A grammar outside the served subset or past the bounds. */
export class LarkGrammarError extends Error {
  override readonly name = "LarkGrammarError";
}

export const LARK_LIMITS = { maxSourceChars: 65_536, maxRules: 512, maxNodes: 16_384, maxRepeat: 256 } as const;

/** The one property of a freeform tool's input object: the raw text its grammar constrains. */
export const FREEFORM_INPUT_PROPERTY = "input";
