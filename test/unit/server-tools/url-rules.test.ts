/** web_fetch's "the URL is in the conversation" rule (whole URLs only) and the allowed / blocked domains. */
import { describe, expect, it } from "vitest";
import { domainAllowed, urlInContext } from "../../../gpu-worker/server-tools/url-rules.ts";

describe("urlInContext", () => {
  const url = "https://example.com/a";

  it.each([
    ["alone", url],
    ["in a sentence", `please read ${url} and summarise`],
    ["ending a sentence", `Read ${url}.`],
    ["in parentheses", `(see ${url})`],
    ["in a markdown link", `[the page](${url})`],
    ["in quotes", `"${url}"`],
    ["in angle brackets", `<${url}>`],
    ["in JSON", `{"url":"${url}"}`],
    ["on a line of its own", `links:\n${url}\nend`],
    ["after a longer URL that holds it", `https://example.com/abc and ${url}`],
  ])("holds the URL %s", (_, text) => {
    expect(urlInContext(url, text)).toBe(true);
  });

  it.each([
    ["as the prefix of a longer path", "see https://example.com/abc"],
    ["as the prefix of a file name", "see https://example.com/a.html"],
    ["before a query", "see https://example.com/a?token=1"],
    ["before a fragment", "see https://example.com/a#top"],
    ["as the start of a longer host", "https://example.com/a-b"],
    ["inside another URL's query", "https://tracker.test/?u=https://example.com/a"],
    ["after a path segment", "https://tracker.test/https://example.com/a"],
    ["after another scheme's letters", "xhttps://example.com/a"],
    ["not at all", "nothing here"],
  ])("does not hold it %s", (_, text) => {
    expect(urlInContext(url, text)).toBe(false);
  });

  it("holds a URL that ends in closing punctuation of its own", () => {
    const wiki = "https://en.wikipedia.org/wiki/Foo_(bar)";
    expect(urlInContext(wiki, `(see ${wiki}).`)).toBe(true);
    expect(urlInContext("https://en.wikipedia.org/wiki/Foo_", `see ${wiki}`)).toBe(false);
  });

  it("is linear on text made of near-misses", () => {
    const text = `${"https://example.com/ab ".repeat(20_000)}${"https://example.com/a.".repeat(20_000)}x`;
    expect(urlInContext(url, text)).toBe(false);
    expect(urlInContext(url, `${text} ${url}`)).toBe(true);
    expect(urlInContext(".", ".".repeat(100_000))).toBe(false);
  });
});

describe("domainAllowed", () => {
  it("covers subdomains, lets blocked win, and needs a URL", () => {
    const rules = { allowedDomains: ["example.com"], blockedDomains: ["private.example.com"] };
    expect(domainAllowed("https://example.com/", rules)).toBe(true);
    expect(domainAllowed("https://docs.example.com/", rules)).toBe(true);
    expect(domainAllowed("https://example.com./", rules)).toBe(true);
    expect(domainAllowed("https://private.example.com/", rules)).toBe(false);
    expect(domainAllowed("https://x.private.example.com/", rules)).toBe(false);
    expect(domainAllowed("https://notexample.com/", rules)).toBe(false);
    expect(domainAllowed("https://example.com.evil.test/", rules)).toBe(false);
    expect(domainAllowed("not a url", rules)).toBe(false);
    expect(domainAllowed("https://anything.test/", { allowedDomains: [], blockedDomains: [] })).toBe(true);
  });
});
