/**
 * web_fetch's HTML → text: ordinary pages read as before, hostile pages take time linear in their
 * size (measured against a plain page of the same size in the same test, never an absolute time),
 * and the size and time limits cut a conversion short.
 */
import { describe, expect, it } from "vitest";
import { htmlToText } from "../../../gpu-worker/server-tools/html-text.ts";

const UNBOUNDED = { maxInputChars: Number.POSITIVE_INFINITY, maxTextChars: Number.POSITIVE_INFINITY, maxMs: 1e9 };

/** The fastest of a few runs of one conversion, in ms (the least disturbed by the other tests). */
function fastest(html: string, runs = 3): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    htmlToText(html, UNBOUNDED);
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

/** `unit` repeated to `chars` characters. */
const fill = (unit: string, chars: number) => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);

const MiB = 1024 * 1024;

/** Pages the old regular expressions took quadratic (or unbounded) time on, and the Parser's nesting traps. */
const HOSTILE: Record<string, (chars: number) => string> = {
  "unclosed attributes (<div x)": (n) => fill("<div x", n),
  "unclosed comments": (n) => fill("<!--", n),
  "comments, scripts, tags, none closed": (n) => fill("<!--<script x<a <style ", n),
  "deep unclosed nesting": (n) => fill("<div>", n),
  "mismatched closes": (n) => fill("<div>", n / 2) + fill("</span>", n / 2),
  "a script never closed": (n) => `<script>${fill("</scrip<", n)}`,
  "an attribute quote never closed": (n) => `<a href="${fill("x&amp", n)}`,
  "entity-like runs": (n) => fill("&ampamp&#x26&#99999999;", n),
  "skipped elements never closed": (n) => fill("<svg><template><noscript>", n),
};

describe("htmlToText", () => {
  it("reads an ordinary page as before: title, words by block, no scripts or styles, entities decoded", () => {
    const page = htmlToText(
      '<!doctype html><html><head><meta charset="utf-8"><title>Frontier &amp; friends</title>' +
        "<style>p{color:red}</style><script>if (a < b && c > d) document.write('<p>no</p>')</script></head>" +
        "<body><!-- a comment --><h1>Hello</h1><p>The frontier test page says hello.</p>" +
        "<ul><li>one</li><li>two &lt;three&gt;</li></ul><p>Second&nbsp;&amp;   last.<br>Next line</p>" +
        "<noscript>enable JS</noscript><template><p>hidden</p></template><svg><text>drawn</text></svg></body></html>",
    );
    expect(page).toEqual({
      title: "Frontier & friends",
      text: "Hello\nThe frontier test page says hello.\none\ntwo <three>\nSecond & last.\nNext line",
    });
  });

  it("keeps the page's own line breaks, joins phrasing elements and separates other tags", () => {
    expect(
      htmlToText("<p>a\n   b</p><p>x <b>bold</b>y <a href=/>link</a>.</p><table><tr><td>1</td><td>2</td></tr></table>"),
    ).toEqual({
      title: "",
      text: "a\nb\nx boldy link.\n1 2",
    });
  });

  it("ends a head left open at the body, and a self-closed svg at once", () => {
    expect(htmlToText("<head><title>x</title><meta x><body>body text<svg/> after")).toEqual({
      title: "x",
      text: "body text after",
    });
  });

  // The linear baseline: an ordinary 2 MiB page (paragraphs of words), measured once, same code path.
  let baseline: number | undefined;
  const ordinary = () => {
    baseline ??= Math.max(fastest(fill("<p>Some words of an ordinary paragraph.</p>\n", 2 * MiB)), 1);
    return baseline;
  };

  it.each(Object.entries(HOSTILE))("finishes a 2 MiB page of %s in time linear in its size", (_, make) => {
    const once = fastest(make(2 * MiB));
    const doubled = fastest(make(4 * MiB));
    // Generous bounds: the same order of work as an ordinary page of that size, and twice the page
    // not four times the time (a floor of the baseline keeps timer noise on tiny times out).
    expect(once).toBeLessThan(ordinary() * 10);
    expect(doubled).toBeLessThan(Math.max(once, ordinary()) * 3);
  });

  it("stops at the text limit, the input limit and the clock", () => {
    const page = fill("<p>twelve chars</p>", 1 * MiB);
    expect(htmlToText(page, { maxTextChars: 1000 }).text.length).toBeLessThanOrEqual(1000);
    expect(htmlToText(page, { maxTextChars: 1000 }).text.length).toBeGreaterThan(900);
    const cut = htmlToText(page, { maxInputChars: 190 });
    expect(cut.text.split("\n")).toHaveLength(10);
    // No time at all: the first look at the clock (after a few hundred events) stops the conversion.
    const stopped = htmlToText(page, { maxMs: 0, maxTextChars: Number.POSITIVE_INFINITY }).text;
    const whole = htmlToText(page, { maxTextChars: Number.POSITIVE_INFINITY, maxMs: 1e9 }).text;
    expect(stopped.length).toBeGreaterThan(0);
    expect(stopped.length).toBeLessThan(whole.length / 100);
  });
});
