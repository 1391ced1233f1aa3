/**
 * The regular-expression subset of Lark terminals (shared/lark-grammar.ts), and the checks every
 * parsed grammar passes: known references, a `start` rule, a node bound, no left recursion.
 */
import { LARK_LIMITS, type LarkExpr, type LarkGrammar, LarkGrammarError } from "./lark-types.ts";

const CLASS_ESCAPES: Record<string, [number, number][]> = {
  d: [[48, 57]],
  w: [
    [48, 57],
    [65, 90],
    [95, 95],
    [97, 122],
  ],
  s: [
    [9, 13],
    [32, 32],
  ],
};
const CHAR_ESCAPES: Record<string, number> = { n: 10, t: 9, r: 13, f: 12, v: 11, "0": 0 };

/** `.` and the other pieces of a regex as expressions (Python `re` semantics: `.` is not a newline). */
export function parseRegex(pattern: string): LarkExpr {
  const reader = new RegexReader(pattern);
  const expr = reader.alternation();
  if (!reader.done()) throw new LarkGrammarError(`regex /${pattern}/: unexpected '${reader.peek()}'`);
  return expr;
}

class RegexReader {
  #at = 0;
  constructor(readonly s: string) {}
  peek(): string {
    return this.s[this.#at] ?? "";
  }
  done(): boolean {
    return this.#at >= this.s.length;
  }
  #fail(what: string): never {
    throw new LarkGrammarError(`regex /${this.s}/: ${what} is not supported`);
  }
  alternation(): LarkExpr {
    const alts = [this.#sequence()];
    while (this.peek() === "|") {
      this.#at++;
      alts.push(this.#sequence());
    }
    return alts.length === 1 ? (alts[0] as LarkExpr) : { k: "alt", alts };
  }
  #sequence(): LarkExpr {
    const items: LarkExpr[] = [];
    while (!this.done() && this.peek() !== "|" && this.peek() !== ")") items.push(this.#quantified());
    return items.length === 1 ? (items[0] as LarkExpr) : { k: "seq", items };
  }
  #quantified(): LarkExpr {
    const node = this.#atom();
    const c = this.peek();
    let min: number;
    let max: number;
    if (c === "?" || c === "*" || c === "+") {
      this.#at++;
      [min, max] = c === "?" ? [0, 1] : c === "*" ? [0, Infinity] : [1, Infinity];
    } else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.#at));
      if (m === null) this.#fail("this '{'");
      this.#at += m[0].length;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
      if (max < min || min > LARK_LIMITS.maxRepeat || (max !== Infinity && max > LARK_LIMITS.maxRepeat))
        this.#fail(`a repeat count past ${LARK_LIMITS.maxRepeat}`);
    } else return node;
    if (this.peek() === "?" || this.peek() === "+") this.#fail("a lazy or possessive quantifier");
    return { k: "rep", node, min, max };
  }
  #atom(): LarkExpr {
    const c = this.s[this.#at++] ?? "";
    if (c === "(") {
      if (this.peek() === "?") {
        if (this.s.startsWith("?:", this.#at)) this.#at += 2;
        else this.#fail("lookaround and named groups");
      }
      const inner = this.alternation();
      if (this.s[this.#at++] !== ")") this.#fail("an unclosed group");
      return inner;
    }
    if (c === ".") return { k: "class", neg: true, ranges: [[10, 10]] };
    if (c === "[") return this.#class();
    if (c === "\\") {
      const e = this.s[this.#at++] ?? "";
      const ranges = CLASS_ESCAPES[e];
      if (ranges !== undefined) return { k: "class", neg: false, ranges };
      const upper = CLASS_ESCAPES[e.toLowerCase()];
      if (upper !== undefined) return { k: "class", neg: true, ranges: upper };
      return { k: "lit", text: String.fromCodePoint(this.#escapedChar(e)) };
    }
    if (c === "^" || c === "$") this.#fail("an anchor");
    if (c === "*" || c === "+" || c === "?" || c === "{" || c === ")") this.#fail(`'${c}' here`);
    return { k: "lit", text: c };
  }
  #escapedChar(e: string): number {
    const code = CHAR_ESCAPES[e];
    if (code !== undefined) return code;
    if (e === "x") {
      const hex = /^[0-9a-fA-F]{2}/.exec(this.s.slice(this.#at));
      if (hex === null) this.#fail("this \\x escape");
      this.#at += 2;
      return Number.parseInt(hex[0], 16);
    }
    if (/[A-Za-z0-9]/.test(e)) this.#fail(`\\${e}`);
    return e.codePointAt(0) ?? 0;
  }
  #class(): LarkExpr {
    const neg = this.peek() === "^";
    if (neg) this.#at++;
    const ranges: [number, number][] = [];
    let first = true;
    while (this.peek() !== "]" || first) {
      if (this.done()) this.#fail("an unclosed class");
      first = false;
      const c = this.s[this.#at++] ?? "";
      let lo: number;
      if (c === "\\") {
        const e = this.s[this.#at++] ?? "";
        const set = CLASS_ESCAPES[e];
        if (set !== undefined) {
          ranges.push(...set);
          continue;
        }
        const negated = CLASS_ESCAPES[e.toLowerCase()];
        if (negated !== undefined) {
          // `\S`, `\D`, `\W` inside a class: everything the lower-case class is not (`[\s\S]` is any character).
          ranges.push(...complement(negated));
          continue;
        }
        lo = this.#escapedChar(e);
      } else if (c === "[") this.#fail("a nested class");
      else lo = c.codePointAt(0) ?? 0;
      if (this.peek() === "-" && this.s[this.#at + 1] !== "]" && this.#at + 1 < this.s.length) {
        this.#at++;
        const h = this.s[this.#at++] ?? "";
        const hi = h === "\\" ? this.#escapedChar(this.s[this.#at++] ?? "") : (h.codePointAt(0) ?? 0);
        if (hi < lo) this.#fail("a reversed range");
        ranges.push([lo, hi]);
      } else ranges.push([lo, lo]);
    }
    this.#at++;
    return { k: "class", neg, ranges };
  }
}

/** The code points outside `ranges` (sorted, disjoint), up to U+10FFFF. */
function complement(ranges: readonly [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of [...ranges].sort((a, b) => a[0] - b[0])) {
    if (lo > next) out.push([next, lo - 1]);
    next = Math.max(next, hi + 1);
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

/** The grammar, after checking references, `start`, the node bound and left recursion. */
export function checked(grammar: LarkGrammar): LarkGrammar {
  const { rules } = grammar;
  if (!rules.has("start")) throw new LarkGrammarError("the grammar has no 'start' rule");
  let nodes = 0;
  const visit = (e: LarkExpr, rule: string): void => {
    if (++nodes > LARK_LIMITS.maxNodes)
      throw new LarkGrammarError(`the grammar has more than ${LARK_LIMITS.maxNodes} nodes`);
    if (e.k === "ref" && !rules.has(e.name)) throw new LarkGrammarError(`rule '${rule}' uses undefined '${e.name}'`);
    if (e.k === "seq") for (const i of e.items) visit(i, rule);
    if (e.k === "alt") for (const a of e.alts) visit(a, rule);
    if (e.k === "rep") visit(e.node, rule);
  };
  for (const [name, e] of rules) visit(e, name);
  const nullable = nullableRules(rules);
  for (const name of rules.keys()) {
    const seen = new Set<string>();
    const stack = [...leftRefs(rules.get(name) as LarkExpr, nullable)];
    while (stack.length > 0) {
      const next = stack.pop() as string;
      if (next === name) throw new LarkGrammarError(`rule '${name}' is left-recursive; rewrite it with repetition`);
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push(...leftRefs(rules.get(next) as LarkExpr, nullable));
    }
  }
  return grammar;
}

function isNullable(e: LarkExpr, nullable: ReadonlySet<string>): boolean {
  switch (e.k) {
    case "lit":
      return e.text === "";
    case "class":
      return false;
    case "ref":
      return nullable.has(e.name);
    case "seq":
      return e.items.every((i) => isNullable(i, nullable));
    case "alt":
      return e.alts.some((a) => isNullable(a, nullable));
    case "rep":
      return e.min === 0 || isNullable(e.node, nullable);
  }
}

function nullableRules(rules: ReadonlyMap<string, LarkExpr>): Set<string> {
  const nullable = new Set<string>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const [name, e] of rules)
      if (!nullable.has(name) && isNullable(e, nullable)) {
        nullable.add(name);
        changed = true;
      }
  }
  return nullable;
}

/** Rules an expression can start with (through nullable prefixes). */
function leftRefs(e: LarkExpr, nullable: ReadonlySet<string>): string[] {
  switch (e.k) {
    case "lit":
    case "class":
      return [];
    case "ref":
      return [e.name];
    case "alt":
      return e.alts.flatMap((a) => leftRefs(a, nullable));
    case "rep":
      return leftRefs(e.node, nullable);
    case "seq": {
      const out: string[] = [];
      for (const item of e.items) {
        out.push(...leftRefs(item, nullable));
        if (!isNullable(item, nullable)) break;
      }
      return out;
    }
  }
}
