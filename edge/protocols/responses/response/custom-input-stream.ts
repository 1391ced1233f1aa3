/**
 * A custom tool's raw input, decoded while its call streams. The worker streams the offered
 * wrapper's arguments (`{"input": "…"}`, JSON text in any chunking); this reads the string value as
 * far as it is complete (an escape split across chunks is held back), so
 * `response.custom_tool_call_input.delta` events carry the input as it is sampled.
 */
import { FREEFORM_INPUT_PROPERTY } from "../../../../shared/lark/lark-grammar.ts";

const OPENING = new RegExp(`^\\s*\\{\\s*"${FREEFORM_INPUT_PROPERTY}"\\s*:\\s*"`);
const SIMPLE_ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

export class CustomInputStream {
  #json = "";
  /** Where the string's next undecoded character is (after the opening), or undefined before it. */
  #at: number | undefined;
  #closed = false;
  /** The input text handed out so far. */
  emitted = "";

  /** Appends argument text; returns the input text newly decoded ("" when none). */
  push(argumentsDelta: string): string {
    this.#json += argumentsDelta;
    if (this.#at === undefined) {
      const opening = OPENING.exec(this.#json);
      if (opening === null) return "";
      this.#at = opening[0].length;
    }
    let out = "";
    const s = this.#json;
    while (!this.#closed && this.#at < s.length) {
      const c = s[this.#at] as string;
      if (c === '"') {
        this.#closed = true;
        break;
      }
      if (c !== "\\") {
        out += c;
        this.#at++;
        continue;
      }
      const e = s[this.#at + 1];
      if (e === undefined) break;
      if (e === "u") {
        const hex = s.slice(this.#at + 2, this.#at + 6);
        if (hex.length < 4) break;
        out += String.fromCharCode(Number.parseInt(hex, 16));
        this.#at += 6;
      } else {
        out += SIMPLE_ESCAPES[e] ?? e;
        this.#at += 2;
      }
    }
    this.emitted += out;
    return out;
  }

  /** At the end: what of the final `input` was not handed out yet ("" when the stream went astray). */
  rest(input: string): string {
    return input.startsWith(this.emitted) ? input.slice(this.emitted.length) : "";
  }
}
