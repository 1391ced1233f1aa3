/** Issue 30 "Low": log lines never hold a whole tool_use / call / response ID. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { log as edgeLog } from "../../../edge/core/log.ts";
import { log as workerLog } from "../../../gpu-worker/log.ts";
import { mintId, newSessionId } from "../../../shared/ids.ts";
import { shortenIds } from "../../../shared/log-ids.ts";

const SECRET = "kq3Yv0pV_8N2mRzT7cXwLd4h";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("IDs in logs", () => {
  it("each ID-shaped token becomes its kind and a stable 8-hex hash", async () => {
    const id = await mintId(SECRET, "toolu", "acme", newSessionId());
    const other = await mintId(SECRET, "toolu", "acme", newSessionId());
    const line = shortenIds(`tool_result.tool_use_id "${id}" does not name a live tool call`);
    expect(line).not.toContain(id.slice(6));
    expect(line).toMatch(/tool_use_id "toolu_#[0-9a-f]{8}" does not name/);
    expect(shortenIds(id)).toBe(shortenIds(id));
    expect(shortenIds(id)).not.toBe(shortenIds(other));
    expect(shortenIds("chatcmpl-AbCdEfGhIjKlMnOp and call_0123456789abcdef")).toMatch(
      /^chatcmpl-#[0-9a-f]{8} and call_#[0-9a-f]{8}$/,
    );
    expect(shortenIds("session=3fa9c2d1 tool_call_id call_id")).toBe("session=3fa9c2d1 tool_call_id call_id");
  });

  it("the worker's and the edge's log lines print the shortened form", async () => {
    const id = await mintId(SECRET, "call", "acme", newSessionId());
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    workerLog("request failed", { message: `function_call_output.call_id "${id}" is unknown` });
    const workerLine = String(stderr.mock.calls[0]?.[0]);
    expect(workerLine).toContain("request failed");
    expect(workerLine).not.toContain(id);
    expect(workerLine).toContain(shortenIds(id));
    const stdout = vi.spyOn(console, "log").mockImplementation(() => undefined);
    edgeLog("edge error", { error: `unknown ${id}`, count: 2 });
    const edgeLine = JSON.parse(String(stdout.mock.calls[0]?.[0])) as Record<string, unknown>;
    expect(edgeLine).toEqual({ event: "edge error", error: `unknown ${shortenIds(id)}`, count: 2 });
  });
});
