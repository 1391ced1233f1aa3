/**
 * Regular-expression sources read from a family's markup text (call-format.ts), for the span
 * readers. The rules, the same for every family:
 * - `exact`: the text as written (a `Lenient` piece: any type word, or optional);
 * - `loose`: any whitespace run in the markup matches any whitespace (`\s*`); trailing whitespace
 *   of an opening piece (`>\n` after a name) is optional;
 * - a name or key before markup that starts with X is one line without X (`<function=NAME>`);
 *   before a closing tag (`</arg_key>`) it is anything up to the next tag, maybe empty; before a
 *   line break it is the rest of the line, maybe empty; before nothing it ends at a line break or
 *   a tag, trimmed.
 */
import type { MarkupText } from "../call-format.ts";

export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The markup exactly as written, its lenient pieces read loosely. */
export function exact(text: MarkupText | undefined): string {
  if (text === undefined) return "";
  if (typeof text === "string") return escapeRegExp(text);
  return text
    .map((p) =>
      typeof p === "string" ? escapeRegExp(p) : p.read === "word" ? "[^<\\n]*" : `(?:${escapeRegExp(p.write)})?`,
    )
    .join("");
}

/** Whitespace runs match any whitespace; with `opening`, trailing whitespace is optional. */
export function loose(text: string, opening = false): string {
  const trailing = opening ? (/\s+$/.exec(text)?.[0] ?? "") : "";
  const body = text.slice(0, text.length - trailing.length);
  const source = body
    .split(/(\s+)/)
    .map((piece, i) => (i % 2 === 1 ? "\\s*" : escapeRegExp(piece)))
    .join("");
  return trailing === "" ? source : `${source}(?:${escapeRegExp(trailing)})?`;
}

/** A name or key followed by `next` (see the rules above); group 1 holds it. */
export function nameBefore(next: string): string {
  if (next === "") return "\\s*([^\\n<]+?)\\s*(?=\\n|<|$)";
  if (next.startsWith("\n")) return "([^\\n]*)";
  if (next.startsWith("</")) return "([^<]*)";
  return `([^${escapeRegExp(next[0] as string)}\\n]+)`;
}
