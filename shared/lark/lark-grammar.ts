/**
 * The subset of Lark that freeform (custom) tool grammars use — Codex's `apply_patch` among them —
 * parsed into a plain expression tree that gpu-worker/chat/grammar/freeform-grammar.ts turns into GBNF.
 * The edge parses a client's grammar to refuse what it cannot serve (a 400 naming the field); the
 * worker parses it again to build the grammar.
 *
 * Served: rules and terminals (`name: …`, `NAME: …`, `|` continuation lines), `start` as the root,
 * string literals, `( )`, `[ ]`, `?`, `*`, `+`, aliases (`-> name`, ignored), `//` comments,
 * `%import common.X` for LF, CR, NEWLINE, WS, WS_INLINE, DIGIT, HEXDIGIT, LETTER, INT, WORD, CNAME,
 * and regular expressions made of literal characters, `.`, classes (`[a-z]`, `[^…]`), `\d \w \s
 * \n \t \r`, groups, `|` and `? * + {m,n}`. Refused: `%ignore`, `%declare`, other imports,
 * case-insensitive literals, `..` ranges, priorities, templates, regex flags, anchors,
 * lookaround, backreferences, and left-recursive rules (a GBNF grammar cannot hold them).
 */
import { checked, parseRegex } from "./lark-regex.ts";
import { LARK_LIMITS, type LarkExpr, type LarkGrammar, LarkGrammarError } from "./lark-types.ts";

export { FREEFORM_INPUT_PROPERTY, type LarkExpr, type LarkGrammar, LarkGrammarError } from "./lark-types.ts";

const cls = (...ranges: [number, number][]): LarkExpr => ({ k: "class", neg: false, ranges });
const DIGIT = cls([48, 57]);
const LETTER = cls([65, 90], [97, 122]);
const plus = (node: LarkExpr): LarkExpr => ({ k: "rep", node, min: 1, max: Infinity });

const COMMON: Record<string, LarkExpr> = {
  LF: { k: "lit", text: "\n" },
  CR: { k: "lit", text: "\r" },
  NEWLINE: plus({
    k: "seq",
    items: [
      { k: "rep", node: { k: "lit", text: "\r" }, min: 0, max: 1 },
      { k: "lit", text: "\n" },
    ],
  }),
  WS: plus(cls([9, 10], [12, 13], [32, 32])),
  WS_INLINE: plus(cls([9, 9], [32, 32])),
  DIGIT,
  HEXDIGIT: cls([48, 57], [65, 70], [97, 102]),
  LETTER,
  INT: plus(DIGIT),
  WORD: plus(LETTER),
  CNAME: {
    k: "seq",
    items: [
      cls([65, 90], [95, 95], [97, 122]),
      { k: "rep", node: cls([48, 57], [65, 90], [95, 95], [97, 122]), min: 0, max: Infinity },
    ],
  },
};

type Token = { t: "name"; v: string } | { t: "str"; v: string } | { t: "re"; v: string } | { t: "op"; v: string };

/** Parse a Lark grammar (root `start`). */
export function parseLark(source: string): LarkGrammar {
  if (source.length > LARK_LIMITS.maxSourceChars)
    throw new LarkGrammarError(`the grammar is longer than ${LARK_LIMITS.maxSourceChars} characters`);
  const rules = new Map<string, LarkExpr>();
  for (const statement of statements(source)) {
    if (statement.startsWith("%")) {
      importCommon(statement, rules);
      continue;
    }
    const head = /^([A-Za-z_][A-Za-z0-9_]*)\s*:(?!:)/.exec(statement);
    if (head === null)
      throw new LarkGrammarError(`cannot read ${JSON.stringify(statement.slice(0, 40))}: expected "name: …"`);
    const name = head[1] as string;
    if (rules.has(name)) throw new LarkGrammarError(`rule '${name}' is defined twice`);
    const reader = new TokenReader(tokenize(statement.slice(head[0].length)));
    rules.set(name, reader.expansions());
    if (!reader.done()) throw new LarkGrammarError(`rule '${name}': unexpected ${JSON.stringify(reader.peek()?.v)}`);
    if (rules.size > LARK_LIMITS.maxRules) throw new LarkGrammarError(`more than ${LARK_LIMITS.maxRules} rules`);
  }
  return checked({ rules });
}

/** A grammar whose start rule is one regular expression (a custom tool's `syntax: "regex"`). */
export function grammarFromRegex(pattern: string): LarkGrammar {
  if (pattern.length > LARK_LIMITS.maxSourceChars)
    throw new LarkGrammarError(`the pattern is longer than ${LARK_LIMITS.maxSourceChars} characters`);
  return checked({ rules: new Map([["start", parseRegex(pattern)]]) });
}

/** Lines joined into statements: a line that starts with whitespace or `|` continues the one before. */
function statements(source: string): string[] {
  const out: string[] = [];
  for (const raw of source.split(/\r?\n/)) {
    const line = stripComment(raw);
    if (line.trim() === "") continue;
    if ((/^\s/.test(line) || line.trimStart().startsWith("|")) && out.length > 0)
      out[out.length - 1] += ` ${line.trim()}`;
    else out.push(line.trim());
  }
  return out;
}

/** Drops a `//` comment that is not inside a string or regex literal. */
function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote !== undefined) {
      if (c === "\\") i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "/") {
      if (c === "/" && line[i + 1] === "/") return line.slice(0, i);
      quote = c;
    }
  }
  return line;
}

function importCommon(statement: string, rules: Map<string, LarkExpr>): void {
  const single = /^%import\s+common\.([A-Z_]+)$/.exec(statement);
  const list = /^%import\s+common\s*\(([A-Z_,\s]+)\)$/.exec(statement);
  const names = single ? [single[1] as string] : list ? (list[1] as string).split(",").map((n) => n.trim()) : undefined;
  if (names === undefined)
    throw new LarkGrammarError(`${statement.split(/\s/)[0]}: only "%import common.NAME" is supported`);
  for (const name of names) {
    const expr = COMMON[name];
    if (expr === undefined) throw new LarkGrammarError(`%import common.${name} is not supported`);
    rules.set(name, expr);
  }
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"' || c === "/") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === "\\" ? 2 : 1;
      if (j >= text.length) throw new LarkGrammarError(`unterminated ${c === '"' ? "string" : "regular expression"}`);
      const body = text.slice(i + 1, j);
      i = j + 1;
      if (/^[a-z]/.test(text[i] ?? "")) throw new LarkGrammarError(`literal flags ("${text[i]}") are not supported`);
      tokens.push(c === '"' ? { t: "str", v: unescapeString(body) } : { t: "re", v: body });
    } else if (text.startsWith("->", i)) {
      tokens.push({ t: "op", v: "->" });
      i += 2;
    } else if ("()[]|?*+".includes(c)) {
      tokens.push({ t: "op", v: c });
      i++;
    } else {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
      if (name === null)
        throw new LarkGrammarError(`'${c}' is not supported in a rule (ranges, priorities, templates are not)`);
      tokens.push({ t: "name", v: name[0] });
      i += name[0].length;
    }
  }
  return tokens;
}

function unescapeString(body: string): string {
  return body.replace(/\\(.)/g, (_, e: string) => ({ n: "\n", t: "\t", r: "\r" })[e] ?? e);
}

class TokenReader {
  #at = 0;
  constructor(readonly tokens: Token[]) {}
  peek(): Token | undefined {
    return this.tokens[this.#at];
  }
  done(): boolean {
    return this.#at >= this.tokens.length;
  }
  #op(v: string): boolean {
    const t = this.peek();
    if (t?.t === "op" && t.v === v) {
      this.#at++;
      return true;
    }
    return false;
  }
  expansions(): LarkExpr {
    const alts = [this.#alias()];
    while (this.#op("|")) alts.push(this.#alias());
    return alts.length === 1 ? (alts[0] as LarkExpr) : { k: "alt", alts };
  }
  #alias(): LarkExpr {
    const items: LarkExpr[] = [];
    for (
      let t = this.peek();
      t !== undefined && !(t.t === "op" && ["|", ")", "]", "->"].includes(t.v));
      t = this.peek()
    )
      items.push(this.#quantified());
    if (this.#op("->") && this.tokens[this.#at++]?.t !== "name") throw new LarkGrammarError("'->' needs an alias name");
    return items.length === 1 ? (items[0] as LarkExpr) : { k: "seq", items };
  }
  #quantified(): LarkExpr {
    const atom = this.#atom();
    if (this.#op("?")) return { k: "rep", node: atom, min: 0, max: 1 };
    if (this.#op("*")) return { k: "rep", node: atom, min: 0, max: Infinity };
    if (this.#op("+")) return { k: "rep", node: atom, min: 1, max: Infinity };
    return atom;
  }
  #atom(): LarkExpr {
    const t = this.tokens[this.#at++];
    if (t === undefined) throw new LarkGrammarError("a rule ends too early");
    if (t.t === "str") return { k: "lit", text: t.v };
    if (t.t === "re") return parseRegex(t.v);
    if (t.t === "name") return { k: "ref", name: t.v };
    if (t.v === "(" || t.v === "[") {
      const inner = this.expansions();
      if (!this.#op(t.v === "(" ? ")" : "]")) throw new LarkGrammarError(`'${t.v}' is not closed`);
      return t.v === "(" ? inner : { k: "rep", node: inner, min: 0, max: 1 };
    }
    throw new LarkGrammarError(`unexpected '${t.v}'`);
  }
}
