/**
 * A custom (freeform) tool's grammar (shared/lark-grammar.ts) as GBNF for its raw-text input,
 * written the way the family writes that input:
 * - `json`: inside the JSON string of `{"input": "…"}`, each character as canonical JSON writes it
 *   (`"` `\` and newline, tab, CR escaped; other control characters are not produced), and a
 *   literal's `<` as `\u003c`, so the grammar's own text never spells the family's markup;
 * - `xml`: raw inside the parameter markup, with no `<` anywhere (a value ends at a closing tag the
 *   parser searches for), so a literal with `<` is refused.
 * Repetitions stay as the grammar has them (`*`, `+`): a real model writes long lines; the output
 * budget bounds a random one.
 */
import {
  FREEFORM_INPUT_PROPERTY,
  grammarFromRegex,
  type LarkExpr,
  type LarkGrammar,
  LarkGrammarError,
  parseLark,
} from "../../../shared/lark/lark-grammar.ts";
import type { GrammarTool } from "../types.ts";
import { type GbnfRules, gbnfLiteral } from "./gbnf.ts";
import { markupSafeJson, SchemaGrammarError } from "./json-schema-grammar.ts";

export type FreeformEncoding = "json" | "xml";

type Ranges = [number, number][];

/** The tool's input grammar as GBNF written in `encoding`, or undefined for a tool without one. */
export function freeformInput(rules: GbnfRules, tool: GrammarTool, encoding: FreeformEncoding): string | undefined {
  const source = tool.inputGrammar;
  if (source === undefined || source.definition === "") return undefined;
  const subject = `tools: the grammar of tool '${tool.name}'`;
  let grammar: LarkGrammar;
  try {
    if (source.syntax === "lark") grammar = parseLark(source.definition);
    else if (source.syntax === "regex") grammar = grammarFromRegex(source.definition);
    else throw new LarkGrammarError(`syntax '${source.syntax}' is not supported`);
  } catch (error) {
    if (error instanceof LarkGrammarError) throw new SchemaGrammarError(`${subject}: ${error.message}`);
    throw error;
  }
  return freeformInputGrammar(rules, grammar, encoding, rules.freshPrefix(`ff-${tool.name}`), subject);
}

/** The arguments object of a JSON-argument family: `{"input": "<the input, JSON-escaped>"}`. */
export function freeformJsonArguments(input: string): string {
  return `${gbnfLiteral(`{"${FREEFORM_INPUT_PROPERTY}": "`)} ${input} ${gbnfLiteral('"}')}`;
}

/** Defines the grammar's rules (named `<prefix>-<n>`) and returns the expression of its start rule. */
export function freeformInputGrammar(
  rules: GbnfRules,
  grammar: LarkGrammar,
  encoding: FreeformEncoding,
  prefix: string,
  subject: string,
): string {
  const names = new Map([...grammar.rules.keys()].map((name, i) => [name, `${prefix}-r${i}`] as const));
  const expr = (e: LarkExpr): string => {
    switch (e.k) {
      case "lit":
        return literal(e.text, encoding, subject);
      case "class":
        return charClass(e.neg, e.ranges, encoding, subject);
      case "ref":
        return names.get(e.name) ?? "";
      case "seq":
        return e.items.length === 0 ? '""' : `(${e.items.map(expr).join(" ")})`;
      case "alt":
        return `(${e.alts.map(expr).join(" | ")})`;
      case "rep": {
        const inner = `(${expr(e.node)})`;
        if (e.min === 0 && e.max === 1) return `${inner}?`;
        if (e.max === Infinity) return e.min === 0 ? `${inner}*` : e.min === 1 ? `${inner}+` : `${inner}{${e.min},}`;
        return `${inner}{${e.min},${e.max}}`;
      }
    }
  };
  for (const [name, e] of grammar.rules) rules.define(names.get(name) as string, () => expr(e));
  return names.get("start") as string;
}

function literal(text: string, encoding: FreeformEncoding, subject: string): string {
  if (encoding === "xml" && text.includes("<"))
    throw new SchemaGrammarError(
      `${subject}: a literal with '<' cannot be written inside this model's argument markup`,
    );
  // In JSON the literal's `<` is written `\u003c` (the same text once parsed), as the JSON-schema
  // grammar writes its literals: a literal such as `</tool_call>` cannot close the call's markup.
  return gbnfLiteral(encoding === "json" ? markupSafeJson(JSON.stringify(text).slice(1, -1)) : text);
}

/** Characters a JSON string writes as an escape (or not at all): controls, `"` and `\`. */
const JSON_SPECIAL: Ranges = [
  [0, 0x1f],
  [0x22, 0x22],
  [0x5c, 0x5c],
];
const JSON_ESCAPES: [number, string][] = [
  [0x22, '\\"'],
  [0x5c, "\\\\"],
  [0x0a, "\\n"],
  [0x09, "\\t"],
  [0x0d, "\\r"],
];

function charClass(neg: boolean, ranges: Ranges, encoding: FreeformEncoding, subject: string): string {
  const excluded: Ranges = encoding === "json" ? JSON_SPECIAL : encoding === "xml" ? [[0x3c, 0x3c]] : [];
  const alternatives: string[] = [];
  if (neg) alternatives.push(`[^${[...ranges, ...excluded].map(rangeText).join("")}]`);
  else {
    const kept = subtract(ranges, excluded);
    if (kept.length > 0) alternatives.push(`[${kept.map(rangeText).join("")}]`);
  }
  if (encoding === "json") {
    for (const [cp, escaped] of JSON_ESCAPES) if (inRanges(ranges, cp) !== neg) alternatives.push(gbnfLiteral(escaped));
  }
  if (alternatives.length === 0)
    throw new SchemaGrammarError(`${subject}: a character class matches nothing this model's markup can hold`);
  return alternatives.length === 1 ? (alternatives[0] as string) : `(${alternatives.join(" | ")})`;
}

const inRanges = (ranges: Ranges, cp: number): boolean => ranges.some(([lo, hi]) => cp >= lo && cp <= hi);

function subtract(ranges: Ranges, cut: Ranges): Ranges {
  let out: Ranges = ranges.map(([lo, hi]) => [lo, hi]);
  for (const [clo, chi] of cut) {
    out = out.flatMap(([lo, hi]): Ranges => {
      if (chi < lo || clo > hi) return [[lo, hi]];
      const parts: Ranges = [];
      if (lo < clo) parts.push([lo, clo - 1]);
      if (hi > chi) parts.push([chi + 1, hi]);
      return parts;
    });
  }
  return out;
}

function rangeText([lo, hi]: [number, number]): string {
  return lo === hi ? classChar(lo) : `${classChar(lo)}-${classChar(hi)}`;
}

function classChar(cp: number): string {
  if (cp < 0x20 || cp === 0x7f || cp === 0x5c || cp === 0x5d || cp === 0x5e || cp === 0x2d || cp === 0x5b)
    return `\\x${cp.toString(16).padStart(2, "0")}`;
  if (cp > 0xffff) return `\\U${cp.toString(16).padStart(8, "0")}`;
  if (cp > 0x7e) return `\\u${cp.toString(16).padStart(4, "0")}`;
  return String.fromCodePoint(cp);
}
