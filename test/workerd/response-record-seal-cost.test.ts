/**
 * What sealing costs a ~1 MB stored record (issue 30 item 3): put and get through ResponseStoreDO,
 * sealed (sealed-records.ts, as the edge does it) and plain (the same JSON bytes through the same
 * store calls, unsealed), median of several rounds, printed for the record; no timing is asserted.
 * workerd's clock moves only across I/O, so each timed span ends with one more (no-op) store call,
 * the same in both arms, and so covers the sealing or opening before it. Run alone:
 *   npx vitest run --config vitest.workerd.config.ts test/workerd/response-record-seal-cost.test.ts
 */
import { describe, expect, it } from "vitest";
import type { StoredResponse } from "../../edge/protocols/responses/sealed-records.ts";
import { newSessionResponse, sealedStore } from "./response-fixtures.ts";

const ROUNDS = 9;
const DAY = 24 * 3600_000;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A ~1 MB record: mixed text (prompts, tool output) rather than one repeated character. */
function megabyteRecord(id: string): StoredResponse {
  const lines = Array.from({ length: 12_000 }, (_, i) => `line ${i}: tool output ${(i * 7919) % 104_729} ✓ — ok\n`);
  const text = lines.join("").slice(0, 520_000);
  return {
    response: newSessionResponse(id, text),
    input: [{ type: "message", role: "user", text }],
    parentId: null,
  };
}

async function median(close: () => Promise<unknown>, task: (round: number) => Promise<void>): Promise<number> {
  await task(-1);
  const times: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await close();
    const start = performance.now();
    await task(round);
    await close();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(ROUNDS / 2)] ?? Number.NaN;
}

describe("cost of sealing a stored record", () => {
  it("puts and gets a ~1 MB record sealed and plain, and prints the medians", async () => {
    const records = sealedStore();
    const tenant = "local";
    const id = (kind: string, round: number) => `resp_cost_${kind}_${round + 1}`;
    const record = megabyteRecord("resp_cost");
    const close = () => records.stub.get("nobody", "resp_none");
    const json = JSON.stringify({ response: record.response, input: record.input });

    const plainPut = await median(close, async (round) => {
      const body = JSON.stringify({ response: record.response, input: record.input });
      await records.stub.put(
        tenant,
        { id: id("plain", round), parentId: null, sealed: encoder.encode(body) as Uint8Array<ArrayBuffer> },
        DAY,
      );
    });
    const sealedPut = await median(close, async (round) => {
      const response = { ...record.response, id: id("sealed", round) };
      await records.put(tenant, { ...record, response }, DAY);
    });
    let plainJson = "";
    const plainGet = await median(close, async (round) => {
      const bytes = await records.stub.get(tenant, id("plain", round));
      const body = bytes ? (JSON.parse(decoder.decode(bytes)) as Pick<StoredResponse, "response">) : undefined;
      plainJson = JSON.stringify(body?.response.output);
    });
    let sealedJson = "";
    const sealedGet = await median(close, async (round) => {
      sealedJson = JSON.stringify((await records.get(tenant, id("sealed", round)))?.output);
    });
    expect(sealedJson).toBe(plainJson);
    expect(sealedJson).toBe(JSON.stringify(record.response.output));

    const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
    const ms = (n: number) => `${n.toFixed(1)} ms`;
    const sealedBytes = (await records.stub.get(tenant, id("sealed", 0)))?.byteLength ?? 0;
    console.log(
      [
        `record: ${kib(encoder.encode(json).byteLength)} JSON, ${kib(sealedBytes)} sealed; median of ${ROUNDS} rounds`,
        `put  plain ${ms(plainPut)}  sealed ${ms(sealedPut)}  (+${ms(sealedPut - plainPut)})`,
        `get  plain ${ms(plainGet)}  sealed ${ms(sealedGet)}  (+${ms(sealedGet - plainGet)})`,
      ].join("\n"),
    );
  });
});
