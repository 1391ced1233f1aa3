import { describe, expect, it } from "vitest";
import { collectRoutingIds } from "../../../edge/protocols/messages/request/routing-ids.ts";
import type { InputMessage } from "../../../edge/protocols/messages/request/types.ts";
import {
  cleanHint,
  hintDecision,
  hintSessionId,
  idCandidates,
  pickWorker,
  requestHint,
  verifyRoutingIds,
} from "../../../edge/session/routing.ts";
import { mintId, newSessionId } from "../../../shared/ids.ts";

const SECRET = "test-secret-0123456789";

const user = (...ids: string[]): InputMessage => ({
  role: "user",
  content: ids.map((id) => ({ type: "tool_result", tool_use_id: id, content: "ok", is_error: false })),
});
const assistant = (...ids: string[]): InputMessage => ({
  role: "assistant",
  content: ids.map((id) => ({ type: "tool_use", id, name: "Bash", input: {} })),
});
const text = (role: "user" | "assistant", value: string): InputMessage => ({
  role,
  content: [{ type: "text", text: value }],
});

async function route(tenant: string, messages: InputMessage[]) {
  return idCandidates(await verifyRoutingIds(SECRET, tenant, collectRoutingIds(messages)));
}

describe("collectRoutingIds", () => {
  it("reads the last user message's results and assistant tool_use ids, latest first", () => {
    const ids = collectRoutingIds([
      text("user", "go"),
      assistant("a1"),
      user("a1"),
      text("assistant", "done"),
      assistant("b1", "b2"),
      user("b2", "b1"),
    ]);
    expect(ids).toEqual({
      toolResults: ["b2", "b1"],
      replayed: [["b1", "b2"], ["a1"]],
      firstTurn: false,
      assistantTurns: 2,
    });
    expect(collectRoutingIds([text("user", "hi")])).toEqual({
      toolResults: [],
      replayed: [],
      firstTurn: true,
      assistantTurns: 0,
    });
  });
});

describe("idCandidates", () => {
  it("routes by tool results that all name one session, in any order", async () => {
    const s = newSessionId();
    const a = await mintId(SECRET, "toolu", "t1", s);
    const b = await mintId(SECRET, "toolu", "t1", s);
    expect(await route("t1", [text("user", "go"), assistant(a, b), user(b, a)])).toEqual([
      { source: "tool-result", sessionId: s },
    ]);
  });

  it("ignores IDs of another tenant or forged ones and falls back to the replayed turn", async () => {
    const s = newSessionId();
    const foreign = await mintId(SECRET, "toolu", "t2", s);
    expect(await route("t1", [text("user", "go"), assistant(foreign), user(foreign)])).toEqual([]);
    const mine = await mintId(SECRET, "toolu", "t1", s);
    const i = mine.length - 5;
    const forged = `${mine.slice(0, i)}${mine[i] === "A" ? "B" : "A"}${mine.slice(i + 1)}`;
    // The results do not all verify, but the replayed assistant turn names the session.
    expect(await route("t1", [text("user", "go"), assistant(mine), user(forged, mine)])).toEqual([
      { source: "replay", sessionId: s },
    ]);
  });

  it("does not route by results that name two sessions", async () => {
    const a = await mintId(SECRET, "toolu", "t1", newSessionId());
    const b = await mintId(SECRET, "toolu", "t1", newSessionId());
    expect(await route("t1", [text("user", "go"), user(a, b)])).toEqual([]);
  });

  it("routes a plain follow-up by the latest replayed turn with Frontier ids", async () => {
    const s = newSessionId();
    const a = await mintId(SECRET, "toolu", "t1", s);
    const messages = [
      text("user", "go"),
      assistant(a),
      user(a),
      text("assistant", "done"),
      assistant("toolu_01ForeignAnthropicId"),
      user("toolu_01ForeignAnthropicId"),
      text("user", "next"),
    ];
    expect(await route("t1", messages)).toEqual([{ source: "replay", sessionId: s }]);
  });

  it("offers both the results' session and a different replayed one", async () => {
    const s1 = newSessionId();
    const s2 = newSessionId();
    const r = await mintId(SECRET, "toolu", "t1", s1);
    const p = await mintId(SECRET, "toolu", "t1", s2);
    expect(await route("t1", [text("user", "go"), assistant(p), user(r)])).toEqual([
      { source: "tool-result", sessionId: s1 },
      { source: "replay", sessionId: s2 },
    ]);
  });
});

describe("hints", () => {
  it("derives a per-tenant session id", async () => {
    const a = await hintSessionId("t1", "uuid-1");
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(await hintSessionId("t1", "uuid-1")).toBe(a);
    expect(await hintSessionId("t2", "uuid-1")).not.toBe(a);
    expect(cleanHint("  x ")).toBe("x");
    expect(cleanHint("")).toBeUndefined();
    expect(cleanHint(null)).toBeUndefined();
    expect(cleanHint("y".repeat(300))).toBeUndefined();
  });

  it("places but never merges", () => {
    const idle = { exists: true, busy: false, pendingToolUseIds: 0, turns: 3 };
    expect(hintDecision({ exists: false, busy: false, pendingToolUseIds: 0, turns: 0 }, true)).toBe("claim");
    expect(hintDecision(idle, false)).toBe("claim");
    expect(hintDecision(idle, true)).toBe("branch");
    expect(hintDecision({ ...idle, busy: true }, false)).toBe("branch");
    expect(hintDecision({ ...idle, pendingToolUseIds: 2 }, false)).toBe("branch");
    expect(hintDecision({ ...idle, turns: 0 }, true)).toBe("claim");
  });

  it("waits behind a busy session's running turn it follows when that is cheaper than re-prefilling", () => {
    const busy = { exists: true, busy: true, pendingToolUseIds: 0, turns: 3 };
    const follow = { follows: true, remainingMs: 500, reprefillMs: 3000 };
    expect(hintDecision(busy, false, follow)).toBe("wait");
    // The running turn's pending tool calls are the previous record's: the waiter decides again on the next.
    expect(hintDecision({ ...busy, pendingToolUseIds: 2 }, false, follow)).toBe("wait");
    // The parent's turn holds the session longer than a re-prefill takes: branch.
    expect(hintDecision(busy, false, { ...follow, remainingMs: 3000 })).toBe("branch");
    // A sibling of the running turn (a real fork) branches at once; the running one keeps the live KV.
    expect(hintDecision(busy, false, { ...follow, follows: false })).toBe("branch");
    expect(hintDecision(busy, false)).toBe("branch");
    expect(hintDecision({ ...busy, busy: false }, false, follow)).toBe("claim");
  });
});

describe("pickWorker", () => {
  const urls = ["http://a", "http://b", "http://c"];
  it("keeps a configured preferred worker and hashes otherwise", () => {
    expect(pickWorker("k", urls, "http://b")).toBe("http://b");
    expect(pickWorker("k", urls, "http://gone")).toBe(pickWorker("k", urls));
    const picked = new Set(Array.from({ length: 50 }, (_, i) => pickWorker(`session-${i}`, urls)));
    expect(picked.size).toBe(3);
  });
});

describe("requestHint", () => {
  it("reads prompt_cache_key, then Claude Code's, Codex's and opencode's session headers", () => {
    const headers = (entries: Record<string, string>) => new Headers(entries);
    expect(requestHint(headers({ "x-claude-code-session-id": "cc" }))).toBe("cc");
    expect(requestHint(headers({ "session-id": "codex" }), "key")).toBe("key");
    expect(requestHint(headers({ "session-id": "codex", "x-session-affinity": "oc" }))).toBe("codex");
    expect(requestHint(headers({ "x-session-affinity": "ses_1", "x-session-id": "ses_1" }))).toBe("ses_1");
    expect(requestHint(headers({ "x-session-id": "ses_2" }))).toBe("ses_2");
    expect(requestHint(headers({ "x-session-id": "  " }))).toBeNull();
    expect(requestHint(headers({}), "x".repeat(300))).toBeNull();
  });
});
