/**
 * Reads a JSON object as it is sampled, for streaming tool arguments: how much of it can be sent
 * now so that what was sent can always be closed into a valid object later (by `closing`), even
 * when generation stops right here. Nothing is invented: a dangling key, a partial number or
 * literal, a trailing comma or a half escape is held back until it completes.
 */

export interface JsonPrefix {
  /** Length of the prefix that may be streamed. */
  safeEnd: number;
  /** Closes the object after the first `safeEnd` chars (e.g. `"}`). */
  closing: string;
  /** Just past the complete object, once it is complete. */
  end: number | undefined;
  /** The text stopped being JSON at this index (nothing after the last safe point was streamed). */
  errorAt: number | undefined;
}

type Expect = "value" | "key" | "colon" | "comma";
interface Container {
  kind: "object" | "array";
  /** No member yet: a closer may follow directly. */
  empty: boolean;
}

const WS = new Set([" ", "\n", "\r", "\t"]);
const LITERAL = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$/;
const LITERAL_CHAR = /[-+.\deEtrufalsn]/;

function closers(stack: readonly Container[]): string {
  let out = "";
  for (let i = stack.length - 1; i >= 0; i--) out += stack[i]?.kind === "object" ? "}" : "]";
  return out;
}

/** Scans `text`, which should start (after whitespace) with `{`. */
export function scanJsonObject(text: string): JsonPrefix {
  const stack: Container[] = [];
  let expect = "value" as Expect;
  let safeEnd = 0;
  let closing = "";
  let i = 0;
  const pending = (): JsonPrefix => ({ safeEnd, closing, end: undefined, errorAt: undefined });
  const fail = (at: number): JsonPrefix => ({ safeEnd, closing, end: undefined, errorAt: at });
  const mark = (at: number, suffix: string): void => {
    safeEnd = at;
    closing = suffix + closers(stack);
  };
  /** A value just completed at `i`. */
  const completed = (): void => {
    const top = stack.at(-1);
    if (top) top.empty = false;
    expect = "comma";
    mark(i, "");
  };
  const close = (): boolean => {
    stack.pop();
    i++;
    completed();
    return stack.length === 0;
  };
  while (i < text.length) {
    const ch = text[i] as string;
    if (WS.has(ch)) {
      i++;
      continue;
    }
    const top = stack.at(-1);
    switch (expect) {
      case "value": {
        if (top === undefined && ch !== "{") return fail(i);
        if (ch === "{" || ch === "[") {
          stack.push({ kind: ch === "{" ? "object" : "array", empty: true });
          expect = ch === "{" ? "key" : "value";
          i++;
          mark(i, "");
        } else if (ch === '"') {
          const after = scanString(text, i + 1, (at) => mark(at, '"'));
          if (after === undefined) return pending();
          if (after < 0) return fail(-after);
          i = after;
          completed();
        } else if (LITERAL_CHAR.test(ch)) {
          let j = i;
          while (j < text.length && LITERAL_CHAR.test(text[j] as string)) j++;
          const literal = text.slice(i, j);
          // A number at the very end may still grow; a complete true/false/null may not.
          if (j === text.length && !/^(?:true|false|null)$/.test(literal)) return pending();
          if (!LITERAL.test(literal)) return fail(i);
          i = j;
          completed();
        } else if (ch === "]" && top?.kind === "array" && top.empty) {
          if (close()) return { safeEnd, closing: "", end: i, errorAt: undefined };
        } else return fail(i);
        break;
      }
      case "key": {
        if (ch === '"') {
          const after = scanString(text, i + 1, () => {});
          if (after === undefined) return pending();
          if (after < 0) return fail(-after);
          i = after;
          expect = "colon";
        } else if (ch === "}" && top?.empty) {
          if (close()) return { safeEnd, closing: "", end: i, errorAt: undefined };
        } else return fail(i);
        break;
      }
      case "colon":
        if (ch !== ":") return fail(i);
        expect = "value";
        i++;
        break;
      case "comma":
        if (ch === ",") {
          expect = top?.kind === "object" ? "key" : "value";
          i++;
        } else if ((ch === "}" && top?.kind === "object") || (ch === "]" && top?.kind === "array")) {
          if (close()) return { safeEnd, closing: "", end: i, errorAt: undefined };
        } else return fail(i);
        break;
    }
  }
  return pending();
}

/**
 * Scans a string body from `from` (just after the opening quote). Returns the index after the
 * closing quote; undefined when the text ends first; `-index` of an invalid char. `safe(at)` is
 * called at every point where the string may be cut and closed with `"`.
 */
function scanString(text: string, from: number, safe: (at: number) => void): number | undefined {
  let i = from;
  safe(i);
  while (i < text.length) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22) return i + 1;
    if (ch < 0x20) return -i;
    if (ch === 0x5c) {
      const next = text[i + 1];
      if (next === undefined) return undefined;
      if (next === "u") {
        const hex = text.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]*$/.test(hex)) return -i;
        if (hex.length < 4) return undefined;
        i += 6;
      } else if ('"\\/bfnrt'.includes(next)) i += 2;
      else return -i;
    } else i++;
    // Never cut between the two halves of a surrogate pair.
    const last = text.charCodeAt(i - 1);
    if (!(last >= 0xd800 && last <= 0xdbff)) safe(i);
  }
  return undefined;
}
