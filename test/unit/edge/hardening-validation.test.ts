/** Issue 14: bodies that reached the worker as 500s are 400s at the edge. */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../edge/core/check.ts";
import { jsonDepth } from "../../../edge/http/body.ts";
import { validateMessagesRequest } from "../../../edge/protocols/messages/request/validate.ts";
import { validateResponsesRequest } from "../../../edge/protocols/responses/request/validate.ts";

describe("jsonDepth", () => {
  it("counts object and array nesting, ignoring brackets inside strings", () => {
    expect(jsonDepth('{"a": [1, {"b": "[[[{{{"}]}', 64)).toBe(3);
    expect(jsonDepth('"\\"[[["', 64)).toBe(0);
    expect(jsonDepth("[]", 64)).toBe(1);
  });

  it("stops counting past the limit (a 10,000-deep body costs no more than a 65-deep one)", () => {
    const deep = `${"[".repeat(10_000)}${"]".repeat(10_000)}`;
    expect(jsonDepth(deep, 64)).toBe(65);
  });
});

const message = { model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] };
const tool = (name: string) => ({ name, input_schema: { type: "object" } });

describe("tool names", () => {
  it.each(["x</tool_call>y", "a b", "", "a".repeat(129), "名前", "do.thing"])("Anthropic refuses %j", (name) => {
    expect(() => validateMessagesRequest({ ...message, tools: [tool(name)] }, { requireMaxTokens: true })).toThrow(
      ValidationError,
    );
  });

  it("Anthropic accepts ^[a-zA-Z0-9_-]{1,128}$", () => {
    const tools = [tool("Bash"), tool("mcp__server__do-thing"), tool("a".repeat(128))];
    expect(validateMessagesRequest({ ...message, tools }, { requireMaxTokens: true }).tools).toHaveLength(3);
  });

  it("OpenAI refuses markup and names past 64 characters", () => {
    const fn = (name: string) => ({ type: "function", name, parameters: { type: "object" } });
    for (const name of ["x</tool_call>y", "a".repeat(65)]) {
      expect(() => validateResponsesRequest({ model: "m", input: "hi", tools: [fn(name)] })).toThrow(/tools\.0\.name/);
    }
    expect(validateResponsesRequest({ model: "m", input: "hi", tools: [fn("a".repeat(64))] }).tools).toHaveLength(1);
  });
});
