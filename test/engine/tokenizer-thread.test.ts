/**
 * Long texts are tokenized on the engine's tokenizer thread (a worker_thread with a vocab-only load
 * of the same GGUF), so a prompt of megabytes does not stall the worker's event loop (issue 14).
 * The thread must give exactly the main thread's tokens, refuse the same inputs, and let the loop
 * (and so other sessions' turns) run while it works.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, THREAD_TOKENIZE_MIN_CHARS } from "../../native/engine.ts";
import { type Engine, TokenizerInputError } from "../../native/engine-types.ts";
import type { FamilyName } from "../../native/model/families.ts";
import { ensureFamilyModel } from "../../native/model/family-model.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { FAMILY_CORPUS } from "./family-corpus.ts";

const OPTIONS = {
  contextSize: 256,
  sequences: 1,
  threads: 1,
  gpu: false,
  flashAttention: false,
  batchSize: 64,
} as const;

/** The corpus joined and repeated past the thread threshold (every text goes to the thread). */
const LONG = (() => {
  const all = Object.values(FAMILY_CORPUS).join("\n");
  return all.repeat(Math.ceil((2 * THREAD_TOKENIZE_MIN_CHARS) / all.length));
})();

const engines = new Map<string, Engine>();
const FAMILIES: readonly FamilyName[] = ["qwen3", "gpt-oss", "deepseek-v3.1"];

beforeAll(async () => {
  engines.set("byte-level", await createEngine({ modelPath: await ensureTestModel("tiny"), ...OPTIONS }));
  for (const family of FAMILIES) {
    engines.set(family, await createEngine({ modelPath: await ensureFamilyModel(family, "tiny"), ...OPTIONS }));
  }
}, 600_000);

afterAll(async () => {
  for (const engine of engines.values()) await engine.dispose();
});

describe("tokenizer thread", () => {
  it.each(["byte-level", ...FAMILIES])(
    "%s: gives exactly the main thread's tokens, plain and special",
    async (name) => {
      const engine = engines.get(name);
      if (!engine) throw new Error(`no engine ${name}`);
      expect(LONG.length).toBeGreaterThanOrEqual(THREAD_TOKENIZE_MIN_CHARS);
      for (const special of [false, true]) {
        const onThread = await engine.tokenizeAsync(LONG, { special });
        expect(onThread).toEqual(engine.tokenize(LONG, { special }));
      }
      // Each corpus text alone takes the main-thread path.
      for (const text of Object.values(FAMILY_CORPUS)) {
        expect(await engine.tokenizeAsync(text, { special: false })).toEqual(engine.tokenize(text, { special: false }));
      }
    },
  );

  it("refuses a run the pre-tokenizer cannot take with the same TokenizerInputError", async () => {
    const engine = engines.get("byte-level");
    await expect(engine?.tokenizeAsync("}".repeat(30_000), { special: false })).rejects.toThrow(TokenizerInputError);
    // The thread survives the refusal.
    expect(await engine?.tokenizeAsync(LONG, { special: false })).toEqual(engine?.tokenize(LONG, { special: false }));
  });

  it("lets the event loop run while a long text tokenizes: a short one asked later finishes first", async () => {
    const engine = engines.get("qwen3");
    if (!engine) throw new Error("no engine");
    const huge = LONG.repeat(16);
    const order: string[] = [];
    let turns = 0;
    const tick = (): void => {
      turns++;
      if (!order.includes("long")) setImmediate(tick);
    };
    setImmediate(tick);
    const long = engine.tokenizeAsync(huge, { special: false }).then((t) => {
      order.push("long");
      return t;
    });
    const short = engine.tokenizeAsync("a short turn of another session", { special: false }).then(() => {
      order.push("short");
    });
    await Promise.all([long, short]);
    expect(order).toEqual(["short", "long"]);
    expect(turns).toBeGreaterThan(1);
  });

  it("tokenizes on the main thread when the thread is off (same tokens)", async () => {
    const path = await ensureTestModel("tiny");
    const engine = await createEngine({ modelPath: path, ...OPTIONS, tokenizerThread: false });
    try {
      expect(await engine.tokenizeAsync(LONG, { special: false })).toEqual(
        engines.get("byte-level")?.tokenize(LONG, { special: false }),
      );
    } finally {
      await engine.dispose();
    }
  });
});
