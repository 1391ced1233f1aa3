/**
 * Google's @google/genai SDK (from npm) against the local stack's Gemini API: a multi-turn
 * function-call loop — calls forced by `toolConfig` ANY, the model turn replayed as the SDK returned
 * it, functionResponses answering by the `call_…` IDs Frontier minted — whose later turns prefill
 * only their suffix, proved by `usageMetadata.cachedContentTokenCount`, the cache header and the
 * worker's decision log; streaming through the SDK's own reader; JSON output under a responseSchema;
 * countTokens and the model list; and Google's error shape as the SDK raises it.
 */
import {
  type Content,
  FunctionCallingConfigMode,
  type GenerateContentResponse,
  GoogleGenAI,
  Type,
} from "@google/genai";
import { describe, expect, inject, it } from "vitest";
import { verifyId } from "../../shared/ids.ts";
import { LOCAL_API_KEY } from "../support/api.ts";
import { decisionsSince, logOffset } from "../support/cli-client.ts";
import { reportContinuedTurn } from "../support/client-packages.ts";

const DEV_ID_SECRET = "frontier-dev-id-secret-change-me";
const ai = new GoogleGenAI({ apiKey: LOCAL_API_KEY, httpOptions: { baseUrl: inject("edgeUrl") } });
const model = "frontier-test";

const lookup = {
  name: "lookup",
  description: "Look a word up",
  parameters: {
    type: Type.OBJECT,
    properties: { word: { type: Type.STRING, maxLength: "8" } },
    required: ["word"],
  },
};
const config = {
  systemInstruction: "You are a dictionary agent.",
  tools: [{ functionDeclarations: [lookup] }],
  temperature: 0,
};

/** Prompt tokens, those of them reused, and every sampled token (the answer's and its thinking's). */
const usage = (r: GenerateContentResponse) => ({
  prompt: r.usageMetadata?.promptTokenCount ?? 0,
  cached: r.usageMetadata?.cachedContentTokenCount ?? 0,
  output: (r.usageMetadata?.candidatesTokenCount ?? 0) + (r.usageMetadata?.thoughtsTokenCount ?? 0),
});

describe("the Gemini API through @google/genai", () => {
  it("continues a function-call loop by call IDs and a text follow-up by prefix, prefilling only suffixes", async () => {
    const log = inject("workerLogFile");
    const start = logOffset(log);
    const user: Content = { role: "user", parts: [{ text: "Look up two words please." }] };
    const first = await ai.models.generateContent({
      model,
      contents: [user],
      config: {
        ...config,
        maxOutputTokens: 200,
        toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } },
      },
    });
    const calls = first.functionCalls ?? [];
    expect(calls.length).toBeGreaterThan(0);
    const session = (await verifyId(DEV_ID_SECRET, first.responseId ?? "", "local"))?.session;
    expect(session).toBeDefined();
    for (const call of calls) {
      expect(call.name).toBe("lookup");
      expect(await verifyId(DEV_ID_SECRET, call.id ?? "", "local")).toEqual({ kind: "call", session });
    }
    // A first turn starts cold or from a prefix another conversation of the tenant shares (the same
    // system and tools: docs/operations/shared-prefixes.md), never from all of its input.
    expect(usage(first).cached).toBeLessThan(usage(first).prompt);

    // The model turn replayed as the SDK returned it; the answers in the order the tools finished.
    const modelTurn = first.candidates?.[0]?.content;
    if (!modelTurn) throw new Error("no content");
    const answers: Content = {
      role: "user",
      parts: [...calls].reverse().map((call) => ({
        functionResponse: { id: call.id, name: call.name, response: { output: `meaning of ${call.args?.word}` } },
      })),
    };
    const chunks: GenerateContentResponse[] = [];
    for await (const chunk of await ai.models.generateContentStream({
      model,
      contents: [user, modelTurn, answers],
      config: { ...config, maxOutputTokens: 8 },
    }))
      chunks.push(chunk);
    const second = chunks.at(-1);
    if (!second) throw new Error("no chunks");
    expect(second.candidates?.[0]?.finishReason).toBeDefined();
    // Everything the first turn left in the KV was reused: its prompt and its sampled output.
    expect(usage(second).cached).toBe(usage(first).prompt + usage(first).output);
    expect(usage(second).prompt - usage(second).cached).toBeLessThan(200);
    const text = chunks.map((c) => c.text ?? "").join("");

    // A text follow-up (no IDs to answer) replays the whole conversation: it routes by the call IDs
    // it replays and continues from the live text.
    const third = await ai.models.generateContent({
      model,
      contents: [
        user,
        modelTurn,
        answers,
        { role: "model", parts: [{ text }] },
        { role: "user", parts: [{ text: "Thanks." }] },
      ],
      config: { ...config, maxOutputTokens: 8 },
    });
    expect(usage(third).cached).toBeGreaterThanOrEqual(usage(second).prompt);
    const decisions = decisionsSince(log, start);
    const lines = decisions.map((d) => d.line).join("\n");
    // The first turn: cold, or from a prefix the tenant's other conversations share (same system + tools).
    expect(["cold", "shared-prefix"], lines).toContain(decisions[0]?.match);
    expect(
      decisions.slice(1).map((d) => d.match),
      lines,
    ).toEqual(["tool-output-ids", "live-text-prefix"]);
    expect(new Set(decisions.map((d) => d.session)).size, lines).toBe(1);
    console.log(
      `genai: function responses prompt=${usage(second).prompt} cached=${usage(second).cached}; text follow-up prompt=${usage(third).prompt} cached=${usage(third).cached}`,
    );
    reportContinuedTurn("function responses", usage(second).prompt, usage(second).cached);
    reportContinuedTurn("text follow-up", usage(third).prompt, usage(third).cached);
  });

  it("answers JSON under a responseSchema, counts tokens and lists the model", async () => {
    const json = await ai.models.generateContent({
      model,
      contents: "Give me a word and its length.",
      config: {
        maxOutputTokens: 120,
        responseMimeType: "application/json",
        responseSchema: {
          type: Type.OBJECT,
          properties: {
            word: { type: Type.STRING, maxLength: "6" },
            length: { type: Type.INTEGER, minimum: 0, maximum: 9 },
          },
          required: ["word", "length"],
        },
      },
    });
    const parsed = JSON.parse(json.text ?? "") as { word: unknown; length: unknown };
    expect(typeof parsed.word).toBe("string");
    expect(Number.isInteger(parsed.length)).toBe(true);

    const counted = await ai.models.countTokens({ model, contents: "Hello there" });
    expect(counted.totalTokens ?? 0).toBeGreaterThan(0);
    const listed = await ai.models.get({ model });
    expect(listed.name).toBe(`models/${model}`);
    expect(listed.inputTokenLimit ?? 0).toBeGreaterThan(0);
  });

  it("raises Google's errors: a bad key, a field Frontier does not serve", async () => {
    const stranger = new GoogleGenAI({ apiKey: "sk-wrong", httpOptions: { baseUrl: inject("edgeUrl") } });
    await expect(stranger.models.generateContent({ model, contents: "hi" })).rejects.toMatchObject({ status: 401 });
    const bad = ai.models.generateContent({ model, contents: "hi", config: { candidateCount: 2 } });
    await expect(bad).rejects.toMatchObject({ status: 400 });
    await expect(bad).rejects.toThrow(/INVALID_ARGUMENT.*candidateCount/);
  });
});
