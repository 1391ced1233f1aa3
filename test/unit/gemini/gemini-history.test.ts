/**
 * Gemini function-call IDs and thoughts in a history: Frontier's own IDs read back (also as Gemini
 * CLI wraps them, `NAME__<id>`) and routed by, ID-less calls paired with their responses by name and
 * order, and a thought taken for the model's own reasoning only when Frontier signed exactly it.
 */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../edge/core/check.ts";
import { toGeminiConversation } from "../../../edge/protocols/gemini/request/normalize.ts";
import { markOwnThoughts } from "../../../edge/protocols/gemini/request/own-thoughts.ts";
import { collectGeminiRoutingIds } from "../../../edge/protocols/gemini/request/routing-ids.ts";
import { validateGeminiRequest } from "../../../edge/protocols/gemini/request/validate.ts";
import { Role } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../../shared/ids.ts";
import { signThinking } from "../../../shared/thinking-signature.ts";

const SECRET = "test-secret-for-gemini-unit-tests-0123456789";
const SESSION = "0123456789abcdef0123456789abcdef";
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

describe("Gemini function-call IDs", () => {
  it("reads Frontier's IDs back, also wrapped by Gemini CLI as NAME__<id>, and routes by them", async () => {
    const a = await mintId(SECRET, "call", "local", SESSION);
    const b = await mintId(SECRET, "call", "local", SESSION);
    const request = validateGeminiRequest(
      {
        contents: [
          user("run"),
          {
            role: "model",
            parts: [
              { text: "Running" },
              { text: "." },
              {
                functionCall: { id: `run_shell_command__${a}`, name: "run_shell_command", args: { command: "echo 1" } },
                thoughtSignature: "skip_thought_signature_validator",
              },
              { functionCall: { id: b, name: "run_shell_command", args: { command: "echo 2" } } },
            ],
          },
          {
            role: "user",
            parts: [
              {
                functionResponse: {
                  id: `run_shell_command__${b}`,
                  name: "run_shell_command",
                  response: { output: "2" },
                },
              },
              { functionResponse: { id: a, name: "run_shell_command", response: { error: "failed" } } },
            ],
          },
        ],
      },
      "m",
    );
    expect(collectGeminiRoutingIds(request.contents)).toEqual({
      toolResults: [b, a],
      replayed: [[a, b]],
      firstTurn: false,
      assistantTurns: 1,
    });
    const conversation = toGeminiConversation(request);
    const [, model, results] = conversation.messages;
    expect(model?.role).toBe(Role.ASSISTANT);
    // Adjacent text parts are one text, as the model wrote it.
    expect(model?.content.map((c) => c.block)).toEqual([
      { case: "text", value: expect.objectContaining({ text: "Running." }) },
      {
        case: "toolUse",
        value: expect.objectContaining({ id: a, name: "run_shell_command", inputJson: '{"command":"echo 1"}' }),
      },
      { case: "toolUse", value: expect.objectContaining({ id: b, inputJson: '{"command":"echo 2"}' }) },
    ]);
    // `{output}` renders as its text, `{error}` as an error result.
    expect(results?.content.map((c) => c.block.value)).toEqual([
      expect.objectContaining({ toolUseId: b, content: "2", isError: false }),
      expect.objectContaining({ toolUseId: a, content: "failed", isError: true }),
    ]);
  });

  it("keeps a foreign NAME__ id whole, and pairs ID-less responses with the calls of their name, in order", () => {
    const request = validateGeminiRequest(
      {
        contents: [
          user("go"),
          {
            role: "model",
            parts: [
              { functionCall: { name: "read", args: { path: "a" } } },
              { functionCall: { name: "list", args: {} } },
              { functionCall: { name: "read", args: { path: "b" } } },
              { functionCall: { id: "read__custom", name: "read", args: {} } },
            ],
          },
          {
            role: "user",
            parts: [
              { functionResponse: { name: "list", response: { files: ["x"] } } },
              { functionResponse: { name: "read", response: { output: "A" } } },
              { functionResponse: { name: "read", response: { output: "B" } } },
              { functionResponse: { id: "read__custom", name: "read", response: { output: "C" } } },
            ],
          },
        ],
      },
      "m",
    );
    const calls = request.contents[1]?.parts.map((p) => (p.kind === "functionCall" ? p.id : "")) ?? [];
    expect(calls).toEqual(["gemini-call-1-0", "gemini-call-1-1", "gemini-call-1-2", "read__custom"]);
    const responses = request.contents[2]?.parts.map((p) => (p.kind === "functionResponse" ? p.id : "")) ?? [];
    expect(responses).toEqual(["gemini-call-1-1", "gemini-call-1-0", "gemini-call-1-2", "read__custom"]);
    // Any other response object renders as its JSON.
    const results = toGeminiConversation(request).messages[2]?.content ?? [];
    expect(results[0]?.block.value).toMatchObject({ content: '{"files":["x"]}' });
  });

  it("refuses an ID-less response that answers no call of its name", () => {
    const error = refusal({
      contents: [
        user("go"),
        { role: "model", parts: [{ functionCall: { name: "read", args: {} } }] },
        { role: "user", parts: [{ functionResponse: { name: "write", response: {} } }] },
      ],
    });
    expect(error.path.join(".")).toBe("contents.2.parts.0.functionResponse.id");
  });
});

describe("Gemini thoughts in a history", () => {
  it("are Frontier's own thinking only when the signature verifies for this tenant and text", async () => {
    const own = await signThinking(SECRET, "local", "step one. step two.");
    const request = validateGeminiRequest(
      {
        contents: [
          user("q"),
          {
            role: "model",
            parts: [
              { text: "step one.", thought: true },
              { text: " step two.", thought: true, thoughtSignature: own },
              { text: "answer" },
            ],
          },
          user("again"),
          {
            role: "model",
            parts: [{ text: "someone else's", thought: true, thoughtSignature: "c29tZQ==" }, { text: "ok" }],
          },
          user("more"),
        ],
      },
      "m",
    );
    await markOwnThoughts(request.contents, (text) => signThinking(SECRET, "local", text));
    const messages = toGeminiConversation(request).messages;
    expect(messages[1]?.content[0]?.block).toEqual({
      case: "thinking",
      value: expect.objectContaining({ thinking: "step one. step two.", signature: own }),
    });
    const foreign = messages[3]?.content[0]?.block;
    expect(foreign?.case).toBe("opaque");
    expect(foreign?.value).toMatchObject({
      type: "thought",
      anchor: "c29tZQ==",
      text: "[thinking from another model] someone else's",
    });
  });

  it("another tenant's signature is not Frontier's own for this one", async () => {
    const theirs = await signThinking(SECRET, "other", "hidden");
    const request = validateGeminiRequest(
      {
        contents: [
          user("q"),
          { role: "model", parts: [{ text: "hidden", thought: true, thoughtSignature: theirs }] },
          user("x"),
        ],
      },
      "m",
    );
    await markOwnThoughts(request.contents, (text) => signThinking(SECRET, "local", text));
    expect(toGeminiConversation(request).messages[1]?.content[0]?.block.case).toBe("opaque");
  });
});
