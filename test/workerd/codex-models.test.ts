/**
 * GET /v1/models also carries Codex's model metadata (`models`: its ModelInfo, codex-rs
 * protocol/src/openai_models.rs), beside the OpenAI and Anthropic list shapes other clients read.
 */
import { describe, expect, it } from "vitest";
import { call } from "./helpers.ts";

/** The keys Codex 0.169 requires to decode a ModelInfo (a missing one fails the whole list). */
const REQUIRED = {
  slug: "string",
  display_name: "string",
  supported_reasoning_levels: "object",
  shell_type: "string",
  visibility: "string",
  supported_in_api: "boolean",
  priority: "number",
  base_instructions: "string",
  supports_reasoning_summaries: "boolean",
  support_verbosity: "boolean",
  truncation_policy: "object",
  supports_parallel_tool_calls: "boolean",
  experimental_supported_tools: "object",
} as const;

interface ModelsBody {
  object: string;
  data: { id: string; object: string }[];
  models: Record<string, unknown>[];
}

describe("GET /v1/models for Codex", () => {
  it("serves Codex's ModelInfo list next to the OpenAI list", async () => {
    const response = await call("/v1/models?client_version=0.169.0", { bearer: true });
    expect(response.status).toBe(200);
    const body = (await response.json()) as ModelsBody;
    expect(body.object).toBe("list");
    expect(body.data[0]).toMatchObject({ id: "frontier-test", object: "model" });
    const model = body.models[0] ?? {};
    for (const [key, type] of Object.entries(REQUIRED)) expect(typeof model[key], key).toBe(type);
    expect(model).toMatchObject({
      slug: "frontier-test",
      shell_type: "unified_exec",
      visibility: "list",
      supported_in_api: true,
      apply_patch_tool_type: "freeform",
      truncation_policy: { mode: "bytes", limit: 10_000 },
    });
    expect(model.base_instructions).not.toBe("");
    const levels = model.supported_reasoning_levels as { effort: string }[];
    expect(levels.map((l) => l.effort)).toContain(model.default_reasoning_level);
  });
});
