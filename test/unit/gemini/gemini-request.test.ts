/**
 * The Gemini API's request side: validation into a typed request (400s naming the field, both
 * field spellings, unknown fields ignored), the OpenAPI-subset schema → JSON Schema, and the proto
 * conversation the pipeline gets. IDs and thoughts in a history: gemini-history.test.ts.
 */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../edge/core/check.ts";
import { toGeminiConversation, toGeminiWorkerTurn } from "../../../edge/protocols/gemini/request/normalize.ts";
import { toJsonSchema } from "../../../edge/protocols/gemini/request/schema.ts";
import { validateCountTokensRequest, validateGeminiRequest } from "../../../edge/protocols/gemini/request/validate.ts";
import { ResponseFormatType, ThinkingMode, ToolChoiceMode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

const _SECRET = "test-secret-for-gemini-unit-tests-0123456789";
const _SESSION = "0123456789abcdef0123456789abcdef";
const user = (text: string) => ({ role: "user", parts: [{ text }] });

function refusal(body: unknown): ValidationError {
  try {
    validateGeminiRequest(body, "frontier-test");
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error("expected a 400");
}

describe("Gemini request validation", () => {
  it("reads a Gemini CLI request: system instruction, functionDeclarations with parametersJsonSchema, its generationConfig", () => {
    const request = validateGeminiRequest(
      {
        contents: [{ role: "user", parts: [{ text: "<session_context>…</session_context>" }, { text: "run it" }] }],
        systemInstruction: { parts: [{ text: "You are Gemini CLI" }] },
        tools: [
          {
            functionDeclarations: [
              {
                name: "run_shell_command",
                description: "Runs bash",
                parametersJsonSchema: {
                  type: "object",
                  properties: { command: { type: "string" } },
                  required: ["command"],
                },
              },
            ],
          },
        ],
        generationConfig: { temperature: 1, topP: 0.95, topK: 64, thinkingConfig: { includeThoughts: true } },
        safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
        someFutureField: { anything: true },
      },
      "frontier-test",
    );
    expect(request.system).toEqual(["You are Gemini CLI"]);
    expect(request.contents[0]?.parts).toEqual([
      { kind: "text", text: "<session_context>…</session_context>" },
      { kind: "text", text: "run it" },
    ]);
    expect(request.functions[0]?.parameters).toEqual({
      type: "object",
      properties: { command: { type: "string" } },
      required: ["command"],
    });
    expect(request.generation).toMatchObject({ temperature: 1, topP: 0.95, topK: 64, includeThoughts: true });
    expect(request.generation.thinking).toEqual({ mode: "dynamic" });
    const turn = toGeminiWorkerTurn(request);
    expect(turn.idKinds).toEqual({ message: "msg", toolCall: "call", serverToolCall: "call" });
    expect(turn.conversation.thinking?.mode).toBe(ThinkingMode.ADAPTIVE);
    expect(turn.sampling.topK).toBe(64);
    expect(turn.conversation.messages[0]?.content.map((b) => b.block.case)).toEqual(["text", "text"]);
  });

  it("accepts the proto's snake_case spellings as well", () => {
    const request = validateGeminiRequest(
      {
        contents: [user("hi")],
        system_instruction: { parts: [{ text: "sys" }] },
        tools: [{ function_declarations: [{ name: "f", parameters: { type: "OBJECT" } }] }],
        tool_config: { function_calling_config: { mode: "ANY", allowed_function_names: ["f"] } },
        generation_config: { max_output_tokens: 10, stop_sequences: ["END"], thinking_config: { thinking_budget: 0 } },
      },
      "m",
    );
    expect(request.system).toEqual(["sys"]);
    expect(request.toolConfig).toEqual({ mode: "ANY", allowedFunctionNames: ["f"] });
    expect(request.generation).toMatchObject({
      maxOutputTokens: 10,
      stopSequences: ["END"],
      thinking: { mode: "off" },
    });
  });

  it("refuses what it does not serve with a 400 naming the field", () => {
    const cases: [unknown, string][] = [
      [{}, "contents"],
      [{ contents: [] }, "contents"],
      [{ contents: [{ role: "system", parts: [{ text: "x" }] }] }, "contents.0.role"],
      [
        { contents: [{ role: "user", parts: [{ inlineData: { mimeType: "image/png", data: "" } }] }] },
        "contents.0.parts.0.inlineData",
      ],
      [{ contents: [{ role: "user", parts: [{}] }] }, "contents.0.parts.0"],
      [{ contents: [{ role: "user", parts: [{ functionCall: { name: "f" } }] }] }, "contents.0.parts.0.functionCall"],
      [
        { contents: [{ role: "model", parts: [{ functionResponse: { name: "f", response: {} } }] }] },
        "contents.0.parts.0.functionResponse",
      ],
      [{ contents: [user("x")], generationConfig: { candidateCount: 2 } }, "generationConfig.candidateCount"],
      [{ contents: [user("x")], generationConfig: { responseLogprobs: true } }, "generationConfig.responseLogprobs"],
      [{ contents: [user("x")], generationConfig: { presencePenalty: 0.5 } }, "generationConfig.presencePenalty"],
      [
        { contents: [user("x")], generationConfig: { responseModalities: ["IMAGE"] } },
        "generationConfig.responseModalities.0",
      ],
      [
        { contents: [user("x")], generationConfig: { responseMimeType: "text/x.enum" } },
        "generationConfig.responseMimeType",
      ],
      [
        { contents: [user("x")], generationConfig: { responseSchema: { type: "STRING" } } },
        "generationConfig.responseMimeType",
      ],
      [{ contents: [user("x")], generationConfig: { temperature: 3 } }, "generationConfig.temperature"],
      [
        { contents: [user("x")], generationConfig: { stopSequences: ["a", "b", "c", "d", "e", "f"] } },
        "generationConfig.stopSequences",
      ],
      [
        { contents: [user("x")], generationConfig: { thinkingConfig: { thinkingLevel: "ULTRA" } } },
        "generationConfig.thinkingConfig.thinkingLevel",
      ],
      [{ contents: [user("x")], cachedContent: "cachedContents/abc" }, "cachedContent"],
      [
        { contents: [user("x")], tools: [{ functionDeclarations: [{ name: "bad name" }] }] },
        "tools.0.functionDeclarations.0.name",
      ],
      [
        { contents: [user("x")], tools: [{ functionDeclarations: [{ name: "f", parameters: { type: "WHATEVER" } }] }] },
        "tools.0.functionDeclarations.0.parameters.type",
      ],
      [
        { contents: [user("x")], toolConfig: { functionCallingConfig: { mode: "SOMETIMES" } } },
        "toolConfig.functionCallingConfig.mode",
      ],
      [
        { contents: [user("x")], toolConfig: { functionCallingConfig: { mode: "ANY" } } },
        "toolConfig.functionCallingConfig.mode",
      ],
      [
        {
          contents: [user("x")],
          tools: [{ functionDeclarations: [{ name: "f" }] }],
          toolConfig: { functionCallingConfig: { mode: "AUTO", allowedFunctionNames: ["f"] } },
        },
        "toolConfig.functionCallingConfig.allowedFunctionNames",
      ],
      [
        {
          contents: [user("x")],
          tools: [{ functionDeclarations: [{ name: "f" }] }],
          toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["g"] } },
        },
        "toolConfig.functionCallingConfig.allowedFunctionNames.0",
      ],
    ];
    for (const [body, field] of cases) expect(refusal(body).path.join("."), JSON.stringify(body)).toBe(field);
  });

  it("declares hosted tools but does not offer them", () => {
    const request = validateGeminiRequest(
      {
        contents: [user("x")],
        tools: [{ googleSearch: {} }, { codeExecution: {} }, { functionDeclarations: [{ name: "f" }] }],
      },
      "m",
    );
    expect(request.toolsNotOffered).toEqual(["googleSearch", "codeExecution"]);
    expect(request.functions.map((f) => f.name)).toEqual(["f"]);
  });

  it("maps toolConfig: ANY with one of several names forces it, NONE turns calls off, VALIDATED is AUTO", () => {
    const tools = [{ functionDeclarations: [{ name: "a" }, { name: "b" }] }];
    const choice = (functionCallingConfig: unknown) =>
      toGeminiConversation(
        validateGeminiRequest({ contents: [user("x")], tools, toolConfig: { functionCallingConfig } }, "m"),
      ).toolChoice;
    expect(choice({ mode: "ANY", allowedFunctionNames: ["b"] })).toMatchObject({
      mode: ToolChoiceMode.TOOL,
      name: "b",
    });
    expect(choice({ mode: "ANY" })?.mode).toBe(ToolChoiceMode.ANY);
    expect(choice({ mode: "ANY", allowedFunctionNames: ["a", "b"] })?.mode).toBe(ToolChoiceMode.ANY);
    expect(choice({ mode: "NONE" })?.mode).toBe(ToolChoiceMode.NONE);
    expect(choice({ mode: "VALIDATED" })?.mode).toBe(ToolChoiceMode.AUTO);
    expect(choice({ mode: "auto" })?.mode).toBe(ToolChoiceMode.AUTO);
  });

  it("serves JSON output: responseSchema (OpenAPI subset, converted), responseJsonSchema (as sent), or any JSON", () => {
    const format = (generationConfig: unknown) =>
      toGeminiWorkerTurn(validateGeminiRequest({ contents: [user("x")], generationConfig }, "m")).responseFormat;
    const openApi = format({
      responseMimeType: "application/json",
      responseSchema: { type: "OBJECT", properties: { n: { type: "INTEGER", nullable: true } }, required: ["n"] },
    });
    expect(openApi?.type).toBe(ResponseFormatType.JSON_SCHEMA);
    expect(JSON.parse(openApi?.schemaJson ?? "")).toEqual({
      type: "object",
      properties: { n: { type: ["integer", "null"] } },
      required: ["n"],
    });
    expect(openApi?.field).toBe("generationConfig.responseSchema");
    // Gemini CLI's router writes Gemini's upper-case type names inside responseJsonSchema.
    const routed = format({
      responseMimeType: "application/json",
      responseJsonSchema: { type: "OBJECT", properties: { score: { type: "INTEGER" } } },
    });
    expect(JSON.parse(routed?.schemaJson ?? "")).toEqual({
      type: "object",
      properties: { score: { type: "integer" } },
    });
    expect(format({ responseMimeType: "application/json" })?.type).toBe(ResponseFormatType.JSON_OBJECT);
    expect(format({ responseMimeType: "text/plain" })).toBeUndefined();
  });

  it("maps thinkingConfig: a budget, off, dynamic, and levels", () => {
    const thinking = (thinkingConfig: unknown) =>
      toGeminiConversation(validateGeminiRequest({ contents: [user("x")], generationConfig: { thinkingConfig } }, "m"))
        .thinking;
    expect(thinking({ thinkingBudget: 2048 })).toMatchObject({ mode: ThinkingMode.ENABLED, budgetTokens: 2048 });
    expect(thinking({ thinkingBudget: 0 })?.mode).toBe(ThinkingMode.DISABLED);
    expect(thinking({ thinkingBudget: -1 })?.mode).toBe(ThinkingMode.ADAPTIVE);
    expect(thinking({ thinkingLevel: "HIGH" })).toMatchObject({ mode: ThinkingMode.ENABLED, budgetTokens: 16_384 });
    expect(thinking({ thinkingLevel: "minimal" })?.mode).toBe(ThinkingMode.DISABLED);
  });

  it("countTokens takes contents or a whole generateContentRequest, its errors named under it", () => {
    const whole = validateCountTokensRequest(
      {
        generateContentRequest: {
          model: "models/m",
          contents: [user("x")],
          systemInstruction: { parts: [{ text: "s" }] },
        },
      },
      "m",
    );
    expect(whole.system).toEqual(["s"]);
    expect(validateCountTokensRequest({ contents: [user("x")] }, "m").contents).toHaveLength(1);
    try {
      validateCountTokensRequest({ generateContentRequest: { contents: [] } }, "m");
      expect.unreachable();
    } catch (error) {
      expect((error as ValidationError).path.join(".")).toBe("generateContentRequest.contents");
    }
  });
});

describe("Gemini Schema → JSON Schema", () => {
  it("lower-cases types, turns nullable into a null branch, reads int64 counts written as strings, drops presentation keys", () => {
    expect(
      toJsonSchema(
        {
          type: "OBJECT",
          description: "d",
          propertyOrdering: ["a", "b"],
          properties: {
            a: {
              type: "ARRAY",
              items: { type: "STRING", enum: ["x", "y"], nullable: true },
              minItems: "1",
              maxItems: "3",
            },
            b: { anyOf: [{ type: "NUMBER", minimum: 0 }, { type: "BOOLEAN" }], nullable: true, example: 3 },
          },
          required: ["a"],
        },
        ["parameters"],
      ),
    ).toEqual({
      type: "object",
      description: "d",
      properties: {
        a: { type: "array", items: { type: ["string", "null"], enum: ["x", "y", null] }, minItems: 1, maxItems: 3 },
        b: { anyOf: [{ type: "number", minimum: 0 }, { type: "boolean" }, { type: "null" }] },
      },
      required: ["a"],
    });
  });
});
