/**
 * A small GBNF reader for tests: parses the subset our grammars use, checks that every referenced
 * rule is defined, and matches whole strings (backtracking over all end positions).
 */

type Node =
  | { k: "lit"; cps: number[] }
  | { k: "class"; neg: boolean; ranges: [number, number][] }
  | { k: "ref"; name: string }
  | { k: "seq"; items: Node[] }
  | { k: "alt"; alts: Node[] }
  | { k: "rep"; node: Node; min: number; max: number };

export interface ParsedGrammar {
  rules: Map<string, Node>;
  /** Names referenced from rule bodies. */
  references: Set<string>;
  /** Repetitions with no upper bound (`*`, `+`, `{m,}`). */
  unbounded: number;
}

class Reader {
  i = 0;
  constructor(readonly s: string) {}
  peek(): string {
    return this.s[this.i] ?? "";
  }
  ws(): void {
    while (/\s/.test(this.peek())) this.i++;
  }
  escape(): number {
    const c = this.s[this.i++];
    const hex = (n: number): number => {
      const h = this.s.slice(this.i, this.i + n);
      this.i += n;
      return Number.parseInt(h, 16);
    };
    switch (c) {
      case "n":
        return 10;
      case "r":
        return 13;
      case "t":
        return 9;
      case "x":
        return hex(2);
      case "u":
        return hex(4);
      case "U":
        return hex(8);
      default:
        return (c ?? "").codePointAt(0) ?? 0;
    }
  }
  char(): number {
    const cp = this.s.codePointAt(this.i) ?? 0;
    this.i += cp > 0xffff ? 2 : 1;
    return cp === 92 ? this.escape() : cp;
  }
}

export function parseGbnf(text: string): ParsedGrammar {
  const rules = new Map<string, Node>();
  const references = new Set<string>();
  let unbounded = 0;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const m = /^([a-zA-Z0-9-]+) ::= (.*)$/.exec(line);
    if (!m) throw new Error(`bad rule line: ${line}`);
    const [, name = "", body = ""] = m;
    if (rules.has(name)) throw new Error(`rule defined twice: ${name}`);
    const r = new Reader(body);
    const alt = (): Node => {
      const alts = [seq()];
      while (r.peek() === "|") {
        r.i++;
        alts.push(seq());
      }
      return alts.length === 1 ? (alts[0] as Node) : { k: "alt", alts };
    };
    const seq = (): Node => {
      const items: Node[] = [];
      for (;;) {
        r.ws();
        const c = r.peek();
        if (c === "" || c === "|" || c === ")") break;
        let node = atom();
        for (;;) {
          const p = r.peek();
          if (p === "?") node = { k: "rep", node, min: 0, max: 1 };
          else if (p === "*" || p === "+") {
            unbounded++;
            node = { k: "rep", node, min: p === "+" ? 1 : 0, max: Number.POSITIVE_INFINITY };
          } else if (p === "{") {
            const close = body.indexOf("}", r.i);
            const [lo = "", hi] = body.slice(r.i + 1, close).split(",");
            const max = hi === undefined ? Number(lo) : hi === "" ? Number.POSITIVE_INFINITY : Number(hi);
            if (max === Number.POSITIVE_INFINITY) unbounded++;
            node = { k: "rep", node, min: Number(lo), max };
            r.i = close;
          } else break;
          r.i++;
        }
        items.push(node);
      }
      return items.length === 1 ? (items[0] as Node) : { k: "seq", items };
    };
    const atom = (): Node => {
      const c = r.peek();
      if (c === '"') {
        r.i++;
        const cps: number[] = [];
        while (r.peek() !== '"') {
          if (r.peek() === "") throw new Error(`unterminated literal in ${name}`);
          cps.push(r.char());
        }
        r.i++;
        return { k: "lit", cps };
      }
      if (c === "[") {
        r.i++;
        const neg = r.peek() === "^";
        if (neg) r.i++;
        const ranges: [number, number][] = [];
        while (r.peek() !== "]") {
          if (r.peek() === "") throw new Error(`unterminated class in ${name}`);
          const lo = r.char();
          if (r.peek() === "-" && r.s[r.i + 1] !== "]") {
            r.i++;
            ranges.push([lo, r.char()]);
          } else ranges.push([lo, lo]);
        }
        r.i++;
        return { k: "class", neg, ranges };
      }
      if (c === "(") {
        r.i++;
        const inner = alt();
        r.ws();
        if (r.peek() !== ")") throw new Error(`missing ) in ${name}`);
        r.i++;
        return inner;
      }
      const id = /^[a-zA-Z0-9-]+/.exec(body.slice(r.i))?.[0];
      if (id === undefined) throw new Error(`unexpected ${JSON.stringify(c)} in ${name} at ${r.i}: ${body}`);
      r.i += id.length;
      references.add(id);
      return { k: "ref", name: id };
    };
    const node = alt();
    if (r.i < body.length) throw new Error(`trailing text in ${name}: ${body.slice(r.i)}`);
    rules.set(name, node);
  }
  return { rules, references, unbounded };
}

/** Names referenced but never defined. */
export function undefinedRules(g: ParsedGrammar): string[] {
  return [...g.references].filter((n) => !g.rules.has(n));
}

/** Whether the grammar's `root` matches all of `text`. */
export function gbnfMatches(grammar: string | ParsedGrammar, text: string): boolean {
  const g = typeof grammar === "string" ? parseGbnf(grammar) : grammar;
  const cps = [...text].map((c) => c.codePointAt(0) ?? 0);
  const memo = new Map<string, number[]>();
  const ends = (node: Node, pos: number): number[] => {
    switch (node.k) {
      case "lit":
        return node.cps.every((cp, j) => cps[pos + j] === cp) ? [pos + node.cps.length] : [];
      case "class": {
        const cp = cps[pos];
        if (cp === undefined) return [];
        const inside = node.ranges.some(([lo, hi]) => cp >= lo && cp <= hi);
        return inside !== node.neg ? [pos + 1] : [];
      }
      case "ref": {
        const key = `${node.name}@${pos}`;
        const hit = memo.get(key);
        if (hit) return hit;
        const body = g.rules.get(node.name);
        if (!body) throw new Error(`undefined rule ${node.name}`);
        const out = ends(body, pos);
        memo.set(key, out);
        return out;
      }
      case "seq": {
        let cur = [pos];
        for (const item of node.items) cur = [...new Set(cur.flatMap((p) => ends(item, p)))];
        return cur;
      }
      case "alt":
        return [...new Set(node.alts.flatMap((a) => ends(a, pos)))];
      case "rep": {
        const out = new Set<number>();
        let cur = [pos];
        for (let n = 0; cur.length > 0; n++) {
          if (n >= node.min) for (const p of cur) out.add(p);
          if (n >= node.max || n > cps.length) break;
          cur = [...new Set(cur.flatMap((p) => ends(node.node, p)))];
        }
        return [...out];
      }
    }
  };
  return ends({ k: "ref", name: "root" }, 0).includes(cps.length);
}
