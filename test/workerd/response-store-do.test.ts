/** ResponseStoreDO in workerd (through the edge's sealing): chains, chunked records, expiry (and its refresh), deletion, tenants. */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ResponseObject } from "../../edge/protocols/responses/request/types.ts";
import type { StoredResponse } from "../../edge/protocols/responses/sealed-records.ts";
import { newSessionResponse, sealedStore } from "./response-fixtures.ts";

const DAY = 24 * 3600_000;

const store = () => sealedStore();

function record(id: string, parentId: string | null, input: string, output: string): StoredResponse {
  return {
    response: newSessionResponse(id, output),
    input: [{ type: "message", role: "user", text: input }],
    parentId,
  };
}

describe("ResponseStoreDO", () => {
  it("rebuilds a conversation from a chain of records, inputs before outputs", async () => {
    const records = store();
    await records.put("local", record("resp_1", null, "q1", "a1"), DAY);
    await records.put("local", record("resp_2", "resp_1", "q2", "a2"), DAY);
    const history = await records.history("local", "resp_2");
    expect(history).toEqual({
      status: "ok",
      items: [
        { type: "message", role: "user", text: "q1" },
        { type: "message", role: "assistant", text: "a1", id: "msg_resp_1" },
        { type: "message", role: "user", text: "q2" },
        { type: "message", role: "assistant", text: "a2", id: "msg_resp_2" },
      ],
    });
    // (RPC typing cannot see through the JSON-schema `parameters` of tools, hence the cast.)
    const stored = (await records.get("local", "resp_2")) as ResponseObject | null;
    expect(stored?.output[0]).toMatchObject({ type: "message" });
  });

  it("isolates tenants: another tenant can neither read, continue nor delete", async () => {
    const records = store();
    await records.put("local", record("resp_1", null, "q", "a"), DAY);
    expect(await records.get("other", "resp_1")).toBeNull();
    expect(await records.history("other", "resp_1")).toEqual({ status: "missing", id: "resp_1" });
    expect(await records.delete("other", "resp_1")).toBe(false);
    expect(await records.get("local", "resp_1")).not.toBeNull();
  });

  it("stores records larger than a SQLite row in chunks", async () => {
    const records = store();
    const big = "x".repeat(1_500_000);
    await records.put("local", record("resp_big", null, big, "ok"), DAY);
    const history = await records.history("local", "resp_big");
    expect(history.status === "ok" && history.items[0]?.type === "message" && history.items[0].text).toBe(big);
  });

  it("expires records after their TTL, and a child's TTL carries its ancestors", async () => {
    const records = store();
    await records.put("local", record("resp_old", null, "q1", "a1"), 150);
    await records.put("local", record("resp_kid", "resp_old", "q2", "a2"), DAY);
    await records.put("local", record("resp_lone", null, "q3", "a3"), 150);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await records.get("local", "resp_lone")).toBeNull();
    expect(await records.history("local", "resp_lone")).toEqual({ status: "missing", id: "resp_lone" });
    // resp_old lives on as long as its child: the chain stays whole.
    expect((await records.history("local", "resp_kid")).status).toBe("ok");
    // The alarm deletes expired rows for good.
    expect(await runDurableObjectAlarm(records.stub)).toBe(true);
    const rows = await runInDurableObject(records.stub, (_instance, state) =>
      state.storage.sql.exec<{ id: string }>("SELECT id FROM responses ORDER BY id").toArray(),
    );
    expect(rows.map((r) => r.id)).toEqual(["resp_kid", "resp_old"]);
  });

  it("reports the missing link when an ancestor was deleted", async () => {
    const records = store();
    await records.put("local", record("resp_a", null, "q1", "a1"), DAY);
    await records.put("local", record("resp_b", "resp_a", "q2", "a2"), DAY);
    expect(await records.delete("local", "resp_a")).toBe(true);
    expect(await records.delete("local", "resp_a")).toBe(false);
    expect(await records.history("local", "resp_b")).toEqual({ status: "missing", id: "resp_a" });
  });
});
