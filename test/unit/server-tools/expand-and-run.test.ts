/** The hosted-tool expansion every family renders, and one call's run against the local fake web. */
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHAT_FAMILIES } from "../../../gpu-worker/chat/family-names.ts";
import { createChatFormat } from "../../../gpu-worker/chat/select-format.ts";
import type { ServerToolsConfig } from "../../../gpu-worker/server-tools/config.ts";
import { offerServerTools } from "../../../gpu-worker/server-tools/declarations.ts";
import { expandServerTools } from "../../../gpu-worker/server-tools/expand.ts";
import { htmlToText } from "../../../gpu-worker/server-tools/html-text.ts";
import { runServerCall } from "../../../gpu-worker/server-tools/run-call.ts";
import { SearxngProvider } from "../../../gpu-worker/server-tools/search-provider.ts";
import {
  ConversationSchema,
  Role,
  ServerToolDeclarationSchema,
  ServerToolKind,
  ToolDefinitionSchema,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { FAKE_PAGE_TEXT, type FakeWeb, startFakeWeb } from "../../support/fake-web.ts";

const search = create(ServerToolDeclarationSchema, {
  kind: ServerToolKind.WEB_SEARCH,
  name: "web_search",
  type: "web_search_20250305",
});
const fetchTool = create(ServerToolDeclarationSchema, {
  kind: ServerToolKind.WEB_FETCH,
  name: "web_fetch",
  type: "web_fetch_20250910",
});
const use = (id: string, query: string) => ({
  block: { case: "serverToolUse" as const, value: { id, name: "web_search", inputJson: JSON.stringify({ query }) } },
});
const result = (toolUseId: string, text: string) => ({
  block: { case: "serverToolResult" as const, value: { toolUseId, type: "web_search_tool_result", text } },
});
const text = (t: string) => ({ block: { case: "text" as const, value: { text: t } } });

function conversation(assistant: ReturnType<typeof text | typeof use | typeof result>[], trailingUser = true) {
  return create(ConversationSchema, {
    serverTools: [search],
    messages: [
      { role: Role.USER, content: [text("find it")] },
      { role: Role.ASSISTANT, content: assistant },
      ...(trailingUser ? [{ role: Role.USER, content: [text("thanks")] }] : []),
    ],
  });
}

/** The hosted-call IDs these tests treat as Frontier's own. */
const OWN = new Set(["s1", "s2"]);

const configured = (web: string): ServerToolsConfig => ({
  search: new SearxngProvider(web, 5000),
  fetch: { allowLoopback: true, ports: [80, 443], maxBytes: 100_000, timeoutMs: 5000, maxRedirects: 2 },
  maxSteps: 3,
  maxSearchResults: 5,
  maxFetchChars: 1000,
});

describe("expandServerTools", () => {
  it("splits an assistant turn where its hosted results are: calls, a tool-result turn, the rest", () => {
    const c = conversation([
      text("let me look"),
      use("s1", "a"),
      use("s2", "b"),
      result("s1", "R1"),
      result("s2", "R2"),
      text("found"),
    ]);
    const expanded = expandServerTools(c, offerServerTools(c.serverTools, configured("http://x")), OWN);
    const shape = expanded.messages.map((m) => `${Role[m.role]}:${m.content.map((b) => b.block.case).join(",")}`);
    expect(shape).toEqual([
      "USER:text",
      "ASSISTANT:text,toolUse,toolUse",
      "USER:toolResult,toolResult",
      "ASSISTANT:text",
      "USER:text",
    ]);
    expect(expanded.tools.map((t) => t.name)).toEqual(["web_search"]);
  });

  it("leaves another provider's exchange in place (context), splitting only Frontier's own", () => {
    const c = conversation([
      use("foreign", "a"),
      result("foreign", "R0"),
      use("s1", "b"),
      result("s1", "R1"),
      text("x"),
    ]);
    const expanded = expandServerTools(c, offerServerTools([], undefined), OWN);
    const shape = expanded.messages.map((m) => `${Role[m.role]}:${m.content.map((b) => b.block.case).join(",")}`);
    expect(shape).toEqual([
      "USER:text",
      "ASSISTANT:serverToolUse,serverToolResult,toolUse",
      "USER:toolResult",
      "ASSISTANT:text",
      "USER:text",
    ]);
  });

  it("a paused turn sent back (ending on a result) ends on the tool-result turn", () => {
    const c = conversation([use("s1", "a"), result("s1", "R1")], false);
    const expanded = expandServerTools(c, offerServerTools([], undefined), OWN);
    expect(expanded.messages.at(-1)?.role).toBe(Role.USER);
    expect(expanded.tools).toHaveLength(0);
  });

  it("refuses a client tool with a hosted tool's name", () => {
    const c = conversation([text("x")]);
    c.tools.push(create(ToolDefinitionSchema, { name: "web_search", description: "", inputSchemaJson: "{}" }));
    expect(() => expandServerTools(c, offerServerTools(c.serverTools, configured("http://x")), OWN)).toThrow(
      /declared twice/,
    );
  });

  it.each(CHAT_FAMILIES)(
    "%s renders the exchange natively: the call in its markup, the result as a tool result",
    (family) => {
      const format = createChatFormat(family, { chatTemplate: undefined });
      const c = conversation([
        use("srvtoolu_1", "frontier query"),
        result("srvtoolu_1", "RESULT-TEXT"),
        text("the answer"),
      ]);
      const rendered = format.render(
        expandServerTools(c, offerServerTools(c.serverTools, configured("http://x")), new Set(["srvtoolu_1"])),
      ).text;
      expect(rendered).toContain("web_search");
      expect(rendered).toContain("frontier query");
      expect(rendered).toContain("RESULT-TEXT");
      expect(rendered).not.toContain("[server_tool_use");
      expect(rendered).not.toContain("[web_search_tool_result");
      expect(rendered.indexOf("frontier query")).toBeLessThan(rendered.indexOf("RESULT-TEXT"));
      expect(rendered.indexOf("RESULT-TEXT")).toBeLessThan(rendered.indexOf("the answer"));
    },
  );
});

describe("runServerCall", () => {
  let web: FakeWeb;
  beforeAll(async () => {
    web = await startFakeWeb();
  });
  afterAll(() => web.close());
  const ctx = (overrides: Partial<Parameters<typeof runServerCall>[2]> = {}) => ({
    config: configured(web.url),
    usesSoFar: 0,
    contextText: "",
    signal: new AbortController().signal,
    ...overrides,
  });

  it("asks SearXNG and renders its hits as the model reads them", async () => {
    const outcome = await runServerCall(search, JSON.stringify({ query: "llamas" }), ctx());
    expect(outcome.errorCode).toBe("");
    expect(outcome.hits.map((h) => h.url)).toEqual([`${web.url}/page.html`, "https://example.org/other"]);
    expect(web.queries.at(-1)).toBe("llamas");
    expect(outcome.modelText).toContain("[1] Frontier test page");
    expect(outcome.modelText).toContain("A page about llamas.");
  });

  it("honours allowed / blocked domains, max_uses and bad input", async () => {
    const allowed = create(ServerToolDeclarationSchema, { ...search, allowedDomains: ["example.org"] });
    const onlyOrg = await runServerCall(allowed, JSON.stringify({ query: "q" }), ctx());
    expect(onlyOrg.hits.map((h) => h.url)).toEqual(["https://example.org/other"]);
    const blocked = create(ServerToolDeclarationSchema, { ...search, blockedDomains: ["example.org"] });
    expect((await runServerCall(blocked, JSON.stringify({ query: "q" }), ctx())).hits).toHaveLength(1);
    const limited = create(ServerToolDeclarationSchema, { ...search, maxUses: 2 });
    const over = await runServerCall(limited, JSON.stringify({ query: "q" }), ctx({ usesSoFar: 2 }));
    expect(over.errorCode).toBe("max_uses_exceeded");
    expect(over.modelText).toBe("[error] max_uses_exceeded");
    expect((await runServerCall(search, "{}", ctx())).errorCode).toBe("invalid_input");
    const down = { ...configured("http://127.0.0.1:9"), search: new SearxngProvider("http://127.0.0.1:9", 2000) };
    expect((await runServerCall(search, JSON.stringify({ query: "q" }), ctx({ config: down }))).errorCode).toBe(
      "unavailable",
    );
  });

  it("fetches only URLs the conversation holds", async () => {
    const url = `${web.url}/page.html`;
    const invented = await runServerCall(fetchTool, JSON.stringify({ url }), ctx({ contextText: "nothing here" }));
    expect(invented.errorCode).toBe("url_not_allowed");
    const named = await runServerCall(fetchTool, JSON.stringify({ url }), ctx({ contextText: `read ${url}` }));
    expect(named.errorCode).toBe("");
    expect(named.page?.text).toContain(FAKE_PAGE_TEXT);
    expect(named.modelText).toContain(`URL: ${url}`);
  });

  it("fetches only whole URLs of the conversation, not a prefix or the inside of one", async () => {
    const url = `${web.url}/page.html`;
    for (const contextText of [`read ${url}.bak`, `read ${url}?key=1`, `go to https://x.test/?next=${url}`]) {
      const outcome = await runServerCall(fetchTool, JSON.stringify({ url }), ctx({ contextText }));
      expect(outcome.errorCode, contextText).toBe("url_not_allowed");
    }
    const sentence = await runServerCall(fetchTool, JSON.stringify({ url }), ctx({ contextText: `(see ${url}).` }));
    expect(sentence.errorCode).toBe("");
  });

  it("passes the allowed domains on to the fetch: a redirect inside them is followed", async () => {
    // Redirects that leave them are refused in safe-fetch.test.ts ("redirects").
    const local = create(ServerToolDeclarationSchema, { ...fetchTool, allowedDomains: ["127.0.0.1"] });
    const url = `${web.url}/to-page`;
    const outcome = await runServerCall(local, JSON.stringify({ url }), ctx({ contextText: url }));
    expect(outcome.errorCode).toBe("");
    expect(outcome.page?.url).toBe(`${web.url}/page.html`);
  });
});

describe("htmlToText", () => {
  it("keeps the title and the words, drops scripts, styles and markup, decodes entities", () => {
    const page = htmlToText(
      "<html><head><title>T &amp; U</title><script>evil()</script></head><body><style>x{}</style><p>One&nbsp;two</p><div>three &#x263A;</div></body></html>",
    );
    expect(page).toEqual({ title: "T & U", text: "One two\nthree ☺" });
  });
});
