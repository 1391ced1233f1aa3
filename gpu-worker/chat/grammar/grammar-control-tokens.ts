/**
 * Grammar literals that spell a control token become that token (`<[id]>`, llama.cpp's token
 * reference). Without this, a grammar-forced call lets the model write `<tool_call>` or
 * `<|channel|>` as several plain-text tokens (`<t`, `ool`, `_ca`, …): the KV then holds markup the
 * model never reads as markup, and a replay (which renders the control token) cannot match it.
 */

import type { PromptSegment } from "../types.ts";
import { gbnfLiteral } from "./gbnf.ts";

/**
 * Rewrite every string literal of `grammar`: the parts `split` marks special become `<[id]>` where
 * `tokenId` knows the text as one token; the rest stay literals. Character classes and comments
 * are left alone.
 */
export function bindControlTokens(
  grammar: string,
  split: (text: string) => PromptSegment[],
  tokenId: (text: string) => number | undefined,
): string {
  let out = "";
  let i = 0;
  while (i < grammar.length) {
    const ch = grammar[i] as string;
    if (ch === '"') {
      const end = literalEnd(grammar, i);
      out += bindLiteral(decodeLiteral(grammar.slice(i + 1, end)), split, tokenId) ?? grammar.slice(i, end + 1);
      i = end + 1;
    } else if (ch === "[") {
      const end = classEnd(grammar, i);
      out += grammar.slice(i, end + 1);
      i = end + 1;
    } else if (ch === "#") {
      const end = grammar.indexOf("\n", i);
      const stop = end === -1 ? grammar.length : end;
      out += grammar.slice(i, stop);
      i = stop;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

/** The rewritten literal, or undefined when it names no control token. */
function bindLiteral(
  text: string,
  split: (text: string) => PromptSegment[],
  tokenId: (text: string) => number | undefined,
): string | undefined {
  const parts = split(text);
  if (!parts.some((p) => p.special)) return undefined;
  const items = parts.map((p) => {
    const id = p.special ? tokenId(p.text) : undefined;
    return id === undefined ? gbnfLiteral(p.text) : `<[${id}]>`;
  });
  return items.length === 1 ? (items[0] as string) : `(${items.join(" ")})`;
}

function literalEnd(grammar: string, start: number): number {
  for (let i = start + 1; i < grammar.length; i++) {
    if (grammar[i] === "\\") i++;
    else if (grammar[i] === '"') return i;
  }
  throw new Error("unterminated grammar literal");
}

function classEnd(grammar: string, start: number): number {
  for (let i = start + 1; i < grammar.length; i++) {
    if (grammar[i] === "\\") i++;
    else if (grammar[i] === "]") return i;
  }
  throw new Error("unterminated grammar character class");
}

const ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  r: "\r",
  t: "\t",
  '"': '"',
  "\\": "\\",
  "[": "[",
  "]": "]",
};

/** The text of a literal's body (the escapes gbnfLiteral writes, plus \uXXXX). */
function decodeLiteral(body: string): string {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (ch !== "\\") {
      out += ch;
      continue;
    }
    const e = body[i + 1] ?? "";
    const hex = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : 0;
    if (hex > 0) {
      out += String.fromCodePoint(Number.parseInt(body.slice(i + 2, i + 2 + hex), 16));
      i += 1 + hex;
    } else {
      out += ESCAPES[e] ?? e;
      i++;
    }
  }
  return out;
}
