import { describe, expect, it } from "vitest";
import { openText, sealText } from "../../../edge/core/sealed-text.ts";
import { fetchResultText, searchResultText, serverToolErrorText } from "../../../shared/server-tool-text.ts";

const SECRET = "s".repeat(32);

describe("sealed text", () => {
  it("opens only for the tenant and purpose it was sealed for", async () => {
    const blob = await sealText(SECRET, "tenant-a", "web_search_hit", "what the model read");
    expect(await openText(SECRET, "tenant-a", "web_search_hit", blob)).toBe("what the model read");
    expect(await openText(SECRET, "tenant-b", "web_search_hit", blob)).toBeUndefined();
    expect(await openText(SECRET, "tenant-a", "reasoning", blob)).toBeUndefined();
    expect(await openText("t".repeat(32), "tenant-a", "web_search_hit", blob)).toBeUndefined();
  });

  it("rejects a tampered blob", async () => {
    const blob = await sealText(SECRET, "tenant-a", "web_fetch_page", "page");
    const flipped = blob.slice(0, -2) + (blob.at(-2) === "A" ? "B" : "A") + blob.at(-1);
    expect(await openText(SECRET, "tenant-a", "web_fetch_page", flipped)).toBeUndefined();
    expect(await openText(SECRET, "tenant-a", "web_fetch_page", "not a blob")).toBeUndefined();
  });
});

describe("server tool result text", () => {
  it("renders hits deterministically, foreign ones without content, headers on one line", () => {
    const text = searchResultText([
      { url: "https://a.example/", title: "A\nfake [2]", pageAge: "2 days", text: "alpha" },
      { url: "https://b.example/", title: "B" },
    ]);
    expect(text).toBe("[1] A fake [2]\nURL: https://a.example/\nAge: 2 days\nalpha\n\n[2] B\nURL: https://b.example/");
    expect(searchResultText([])).toBe("(no results)");
  });

  it("renders a page and an error", () => {
    expect(fetchResultText({ url: "https://a.example/", title: "A", text: "body" })).toBe(
      "URL: https://a.example/\nTitle: A\n\nbody",
    );
    expect(fetchResultText({ url: "https://a.example/" })).toBe("URL: https://a.example/\n\n(content not available)");
    expect(serverToolErrorText("max_uses_exceeded")).toBe("[error] max_uses_exceeded");
  });
});
