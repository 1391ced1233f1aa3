/**
 * The OpenAI Agents SDK (`@openai/agents`) on its Responses WebSocket transport against the local
 * stack: `withResponsesWebSocketSession` (an OpenAIProvider with `useResponses` and
 * `useResponsesWebSocket`) runs an agent with one function tool; the SDK's own run loop calls the
 * tool and sends its output back over the socket, and that continued turn is live (the worker logs
 * `match=tool-output-ids`). `modelSettings.toolChoice: "required"` on the first turn forces a call
 * by grammar (the model has random weights); `resetToolChoice` (the SDK's default) lets the next
 * turn answer.
 *
 * The SDK's transport needs a global `WebSocket` that takes headers (`new WebSocket(url, { headers })`):
 * Node's own (undici's) is one.
 * `@openai/agents` is a devDependency (imported by name at run time, so `npm run clients:latest` can
 * point the test at the newest one).
 */

import { readFileSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import { LOCAL_API_KEY } from "../support/api.ts";
import { reportContinuedTurn } from "../support/client-packages.ts";

const PACKAGE = "@openai/agents";

/** The part of the Agents SDK this test drives (typed here: the package may be absent at typecheck time). */
interface AgentsSdk {
  /** Traces go to OpenAI's platform by default: nothing may leave this machine. */
  setTracingDisabled: (disabled: boolean) => void;
  Agent: new (config: Record<string, unknown>) => unknown;
  tool: (config: {
    name: string;
    description: string;
    parameters: Record<string, unknown>;
    strict: boolean;
    execute: (input: unknown) => Promise<string> | string;
  }) => unknown;
  withResponsesWebSocketSession: <T>(
    callback: (session: {
      run: (agent: unknown, input: string, options?: Record<string, unknown>) => Promise<AgentRun>;
    }) => Promise<T>,
    options: { providerOptions: Record<string, unknown> },
  ) => Promise<T>;
}

interface AgentRun {
  finalOutput?: unknown;
  newItems: { type: string }[];
  rawResponses: { usage?: { inputTokens?: number }; providerData?: Record<string, unknown> }[];
}

describe(`${PACKAGE} over the Responses WebSocket transport`, () => {
  it("runs the SDK's tool loop on one socket, the tool output continuing the live KV", async () => {
    const sdk = (await import(/* @vite-ignore */ PACKAGE)) as AgentsSdk;
    sdk.setTracingDisabled(true);
    const logFile = inject("workerLogFile");
    const before = readFileSync(logFile, "utf8").length;
    const looked: unknown[] = [];
    const lookup = sdk.tool({
      name: "lookup",
      description: "Look a word up",
      parameters: {
        type: "object",
        properties: { word: { type: "string", maxLength: 8 } },
        required: ["word"],
        additionalProperties: false,
      },
      strict: false,
      execute: (input) => {
        looked.push(input);
        return "a small word";
      },
    });
    const agent = new sdk.Agent({
      name: "dictionary",
      instructions: "You are a dictionary agent.",
      model: "frontier-test",
      tools: [lookup],
      modelSettings: { toolChoice: "required", temperature: 0, maxTokens: 200 },
    });
    const result = await sdk.withResponsesWebSocketSession(
      ({ run }) => run(agent, "Look up one word please.", { maxTurns: 4 }),
      { providerOptions: { baseURL: `${inject("edgeUrl")}/v1`, apiKey: LOCAL_API_KEY } },
    );
    expect(looked.length).toBeGreaterThan(0);
    expect(result.newItems.some((item) => item.type === "tool_call_output_item")).toBe(true);
    expect(result.rawResponses.length).toBeGreaterThanOrEqual(2);
    const decisions = readFileSync(logFile, "utf8")
      .slice(before)
      .split("\n")
      .filter((l) => / (live continuation|live kv cache miss) /.test(l));
    const live = decisions.find((l) => / live continuation match=tool-output-ids /.test(l));
    expect(live, decisions.join("\n")).toBeDefined();
    // The tool output turn prefilled only its suffix.
    const [, cached, prompt] = /cached=(\d+) prompt=(\d+)/.exec(live ?? "") ?? [];
    expect(Number(prompt) - Number(cached)).toBeLessThan(Number(prompt) / 3);
    reportContinuedTurn("tool output over the socket", Number(prompt), Number(cached));
  });
});
