/** Small helpers for writing llama.cpp GBNF grammars. */

/** A GBNF string literal matching exactly `text`. */
export function gbnfLiteral(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

/** A rule name fragment made of the characters GBNF allows ([a-zA-Z0-9-]). */
export function gbnfName(hint: string): string {
  const cleaned = hint
    .replace(/[^a-zA-Z0-9-]+/g, "-")
    .replace(/-+/g, "-")
    .replace(/^-|-$/g, "");
  return cleaned === "" ? "r" : cleaned.slice(0, 48);
}

/**
 * An ordered set of named rules. Identical bodies share one rule; names are made unique.
 * `root` is written first.
 */
export class GbnfRules {
  readonly #bodies = new Map<string, string>();
  readonly #byBody = new Map<string, string>();
  readonly #prefixes = new Set<string>();
  /** Next suffix to try per base name: a name reused n times costs O(n), not O(n²) (issue 14). */
  readonly #nextSuffix = new Map<string, number>();

  /** Add (or reuse) a rule with this body; returns its name. */
  add(hint: string, body: string): string {
    const existing = this.#byBody.get(body);
    if (existing !== undefined) return existing;
    const base = gbnfName(hint);
    let name = base;
    let i = this.#nextSuffix.get(base) ?? 2;
    while (this.#bodies.has(name) || name === "root") name = `${base}-${i++}`;
    this.#nextSuffix.set(base, i);
    this.#bodies.set(name, body);
    this.#byBody.set(body, name);
    return name;
  }

  /** A name prefix no other caller of `freshPrefix` gets (rules under it: `<prefix>-r<n>`). */
  freshPrefix(hint: string): string {
    const base = gbnfName(hint);
    let name = base;
    for (let i = 2; this.#prefixes.has(name); i++) name = `${base}-${i}`;
    this.#prefixes.add(name);
    return name;
  }

  /** Define a rule under an exact name once (for shared primitives); returns the name. */
  define(name: string, body: () => string): string {
    if (!this.#bodies.has(name)) this.#bodies.set(name, body());
    return name;
  }

  toGrammar(rootBody: string): string {
    const lines = [`root ::= ${rootBody}`];
    for (const [name, body] of this.#bodies) lines.push(`${name} ::= ${body}`);
    return `${lines.join("\n")}\n`;
  }
}
