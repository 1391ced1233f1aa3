/**
 * Codex CLI's model catalog (`GET /v1/models?client_version=…`): Codex's `ModelsResponse` shape,
 * every value read from the worker's Health (context size, chat format's thinking toggle, calls per
 * generation), Codex's default instructions unchanged; the plain OpenAI/Anthropic list is untouched.
 */
import { afterEach, describe, expect, it } from "vitest";
import { THINKING_BUDGETS } from "../../edge/protocols/responses/request/normalize.ts";
import { type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { call } from "./helpers.ts";

interface CodexModelInfo {
  slug: string;
  context_window: number;
  max_context_window: number;
  supported_reasoning_levels: { effort: string; description: string }[];
  default_reasoning_level: string | null;
  supports_parallel_tool_calls: boolean;
  input_modalities: string[];
  base_instructions: string;
  description: string;
  visibility: string;
  shell_type: string;
  truncation_policy: { mode: string; limit: number };
}

let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

const CHATML = { chatFormat: "chatml", thinkingToggle: true, maxCallsPerTurn: 8 };
const healthOf = (extra: Record<string, unknown>) => () => ({
  ready: true,
  workerId: "fake",
  modelName: "m",
  ...extra,
});

async function catalog(): Promise<{ models: CodexModelInfo[] }> {
  const response = await call("/v1/models?client_version=0.171.0", { bearer: true });
  expect(response.status).toBe(200);
  return (await response.json()) as { models: CodexModelInfo[] };
}

describe("GET /v1/models?client_version (Codex's catalog)", () => {
  it("describes the served model from the worker's Health", async () => {
    fake = installFakeWorker(() => [], { health: healthOf({ contextSize: 32_768, ...CHATML }) });
    const { models } = await catalog();
    expect(models).toHaveLength(1);
    const [model] = models;
    expect(model).toMatchObject({
      slug: "frontier-test",
      context_window: 32_768,
      max_context_window: 32_768,
      default_reasoning_level: null,
      supports_parallel_tool_calls: true,
      input_modalities: ["text"],
      visibility: "list",
      shell_type: "default",
      truncation_policy: { mode: "bytes", limit: 10_000 },
    });
    expect(model?.description).toContain("chatml chat format, 32768-token context");
    expect(model?.supported_reasoning_levels.map((l) => l.effort)).toEqual(["none", ...Object.keys(THINKING_BUDGETS)]);
    expect(model?.supported_reasoning_levels[2]?.description).toBe("Thinking on, up to 4096 tokens");
    expect(model?.base_instructions).toMatch(/^You are a coding agent running in the Codex CLI/);
  });

  it("offers no reasoning levels or parallel calls where the format has neither (harmony)", async () => {
    const harmony = { chatFormat: "harmony", thinkingToggle: false, maxCallsPerTurn: 1 };
    fake = installFakeWorker(() => [], { health: healthOf({ contextSize: 8192, ...harmony }) });
    const [model] = (await catalog()).models;
    expect(model?.supported_reasoning_levels).toEqual([]);
    expect(model?.supports_parallel_tool_calls).toBe(false);
    expect(model?.context_window).toBe(8192);
  });

  it("is refused with a retryable error while no worker is ready", async () => {
    fake = installFakeWorker(() => [], { health: healthOf({ ready: false, contextSize: 8192, ...CHATML }) });
    const response = await call("/v1/models?client_version=0.171.0", { bearer: true });
    expect(response.status).toBe(529);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error.message).toContain("No worker is ready");
  });

  it("needs the API key, and leaves the plain model list as it was", async () => {
    const unauthenticated = await call("/v1/models?client_version=0.171.0", { key: null });
    expect(unauthenticated.status).toBe(401);
    await unauthenticated.arrayBuffer();
    const plain = await call("/v1/models", { bearer: true });
    expect(await plain.json()).toMatchObject({ object: "list", data: [{ id: "frontier-test", object: "model" }] });
  });
});
