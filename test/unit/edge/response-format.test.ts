/**
 * response_format (Chat Completions) and text.format (Responses) → the proto ResponseFormat the
 * worker builds its answer grammar from; the response object echoes text.format.
 */
import { describe, expect, it } from "vitest";
import { validateChatRequest } from "../../../edge/protocols/chat/validate.ts";
import { toResponseFormat } from "../../../edge/protocols/openai/response-format.ts";
import { toGenerateRequest } from "../../../edge/protocols/responses/request/normalize.ts";
import { validateResponsesRequest } from "../../../edge/protocols/responses/request/validate.ts";
import { newResponseObject } from "../../../edge/protocols/responses/response/response-object.ts";
import { ResponseFormatType } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

const base = { model: "m", messages: [{ role: "user", content: "hi" }] };
const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

describe("Chat Completions response_format", () => {
  it("text (or absent) sends no format", () => {
    expect(toResponseFormat(validateChatRequest(base).responseFormat, "f")).toBeUndefined();
    const text = validateChatRequest({ ...base, response_format: { type: "text" } });
    expect(toResponseFormat(text.responseFormat, "f")).toBeUndefined();
  });

  it("json_object and json_schema (name, schema, strict) reach the proto with the schema's field", () => {
    const object = validateChatRequest({ ...base, response_format: { type: "json_object" } });
    expect(toResponseFormat(object.responseFormat, "response_format.json_schema.schema")?.type).toBe(
      ResponseFormatType.JSON_OBJECT,
    );
    const request = validateChatRequest({
      ...base,
      response_format: { type: "json_schema", json_schema: { name: "weather", schema, strict: true } },
    });
    const format = toResponseFormat(request.responseFormat, "response_format.json_schema.schema");
    expect(format).toMatchObject({
      type: ResponseFormatType.JSON_SCHEMA,
      name: "weather",
      strict: true,
      field: "response_format.json_schema.schema",
    });
    expect(JSON.parse(format?.schemaJson ?? "")).toEqual(schema);
    const loose = validateChatRequest({
      ...base,
      response_format: { type: "json_schema", json_schema: { name: "w", strict: null } },
    });
    expect(toResponseFormat(loose.responseFormat, "x")).toMatchObject({ schemaJson: "", strict: false });
  });
});

describe("Responses text.format", () => {
  const target = { requestId: "r", tenantId: "t", sessionId: "s", epoch: 0 };

  it("json_schema with its fields inline reaches the GenerateRequest and is echoed", () => {
    const request = validateResponsesRequest({
      model: "m",
      input: "hi",
      text: { format: { type: "json_schema", name: "weather", schema, strict: true, description: "d" } },
    });
    const generate = toGenerateRequest(request, request.input, target);
    expect(generate.responseFormat).toMatchObject({
      type: ResponseFormatType.JSON_SCHEMA,
      name: "weather",
      strict: true,
      field: "text.format.schema",
    });
    expect(newResponseObject(request, "resp_x", 0).text).toEqual({
      format: { type: "json_schema", name: "weather", description: "d", schema, strict: true },
    });
  });

  it("json_object is served; text sends nothing", () => {
    const object = validateResponsesRequest({ model: "m", input: "hi", text: { format: { type: "json_object" } } });
    expect(toGenerateRequest(object, object.input, target).responseFormat?.type).toBe(ResponseFormatType.JSON_OBJECT);
    expect(newResponseObject(object, "resp_x", 0).text).toEqual({ format: { type: "json_object" } });
    const text = validateResponsesRequest({ model: "m", input: "hi", text: { format: { type: "text" } } });
    expect(toGenerateRequest(text, text.input, target).responseFormat).toBeUndefined();
  });
});
