/**
 * Issue 14's reproducers against the real stack, as regression tests: each used to crash the
 * worker (segfault in llama.cpp's tokenizer), stall it, or answer 500; each is now a 4xx in the
 * protocol's own error shape, and the worker process is the same one at the end.
 */
import { afterAll, describe, expect, inject, it } from "vitest";
import { LOCAL_API_KEY, postJson } from "../support/api.ts";

const edge = inject("edgeUrl");
const workerPid = inject("workerPid");

interface AnthropicError {
  type: string;
  error: { type: string; message: string };
}
interface OpenAiError {
  error: { message: string; type: string; param: string | null; code: string | null };
}

function workerAlive(): boolean {
  try {
    process.kill(workerPid, 0);
    return true;
  } catch {
    return false;
  }
}

async function expectAnthropic400(res: Response, message?: RegExp): Promise<void> {
  const body = (await res.json()) as AnthropicError;
  expect(res.status, JSON.stringify(body)).toBe(400);
  expect(body.type).toBe("error");
  expect(body.error.type).toBe("invalid_request_error");
  if (message) expect(body.error.message).toMatch(message);
}

async function expectOpenAi400(res: Response, message?: RegExp): Promise<void> {
  const body = (await res.json()) as OpenAiError;
  expect(res.status, JSON.stringify(body)).toBe(400);
  expect(body.error.type).toBe("invalid_request_error");
  if (message) expect(body.error.message).toMatch(message);
}

function postText(url: string, body: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": LOCAL_API_KEY, "anthropic-version": "2023-06-01" },
    body,
  });
}

const forced = (tool: Record<string, unknown>, content = "Go.") => ({
  model: "m",
  max_tokens: 512,
  tools: [tool],
  tool_choice: { type: "tool", name: tool.name },
  messages: [{ role: "user", content }],
});

afterAll(() => {
  // Nothing above may have killed (or restarted) the worker.
  expect(workerAlive()).toBe(true);
});

describe("no input crashes the worker", () => {
  it.each(["}", "-", "1"])("%j x 30,000 is a 400 on /v1/messages, count_tokens and /v1/responses", async (char) => {
    const text = char.repeat(30_000);
    const messages = { model: "m", max_tokens: 8, messages: [{ role: "user", content: text }] };
    await expectAnthropic400(await postJson(`${edge}/v1/messages`, messages), /run of 30000/);
    await expectAnthropic400(await postJson(`${edge}/v1/messages`, { ...messages, stream: true }), /run of 30000/);
    await expectAnthropic400(await postJson(`${edge}/v1/messages/count_tokens`, messages), /run of 30000/);
    const responses = await postJson(`${edge}/v1/responses`, { model: "m", input: text, max_output_tokens: 8 });
    await expectOpenAi400(responses, /run of 30000/);
    expect(workerAlive()).toBe(true);
  });

  it("a prompt too large for the context is refused by its byte count", async () => {
    const text = "lorem ipsum ".repeat(200_000); // 2.4 MB: cannot fit 65,536 tokens of this vocabulary
    await expectAnthropic400(
      await postJson(`${edge}/v1/messages`, { model: "m", max_tokens: 8, messages: [{ role: "user", content: text }] }),
      /bytes, at least \d+ tokens/,
    );
  });
});

describe("sampling parameters", () => {
  it("a denormal temperature with a forced call is sampled greedily (it killed the worker: found by the fuzz tier)", async () => {
    const res = await postJson(`${edge}/v1/messages`, {
      ...forced({ name: "t", input_schema: { anyOf: [] } }),
      temperature: 2.4796858136550205e-43,
      tool_choice: { type: "any" },
      stream: true,
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("event: message_stop");
    expect(workerAlive()).toBe(true);
  });
});

describe("bad schemas and deep bodies are 400s", () => {
  it("an input_schema nested 3,000 deep and an unknown block nested 10,000 deep", async () => {
    const schema = `${'{"type":"object","properties":{"a":'.repeat(3000)}{"type":"string"}${"}}".repeat(3000)}`;
    const tool = `{"name":"deep","input_schema":${schema}}`;
    const deepSchema = `{"model":"m","max_tokens":8,"tools":[${tool}],"tool_choice":{"type":"tool","name":"deep"},"messages":[{"role":"user","content":"Go."}]}`;
    await expectAnthropic400(await postText(`${edge}/v1/messages`, deepSchema), /deeper than 64/);
    // Built as text: JSON.stringify itself overflows the stack 10,000 levels down.
    const block = `${"[".repeat(10_000)}"x"${"]".repeat(10_000)}`;
    const unknownBlock = `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":[{"type":"mystery_block","payload":${block}}]}]}`;
    await expectAnthropic400(await postText(`${edge}/v1/messages`, unknownBlock), /deeper than 64/);
    await expectOpenAi400(await postText(`${edge}/v1/responses`, `{"model":"m","input":[${block}]}`), /deeper than 64/);
  });

  it("empty schema types and an exponential $ref schema with a forced tool choice", async () => {
    await expectAnthropic400(
      await postJson(`${edge}/v1/messages`, forced({ name: "t", input_schema: { type: [] } })),
      /"type" is an empty list/,
    );
    const exploding = { anyOf: Array.from({ length: 7 }, () => ({ $ref: "#" })) };
    await expectAnthropic400(
      await postJson(`${edge}/v1/messages`, forced({ name: "t", input_schema: exploding })),
      /more than 4096 nodes/,
    );
    const fn = { type: "function", name: "t", parameters: exploding };
    const responses = await postJson(`${edge}/v1/responses`, {
      model: "m",
      input: "Go.",
      tools: [fn],
      tool_choice: { type: "function", name: "t" },
    });
    await expectOpenAi400(responses, /more than 4096 nodes/);
  });
});

describe("nothing a client sends closes the format's markup", () => {
  it("a tool named x</tool_call>y is refused", async () => {
    await expectAnthropic400(
      await postJson(`${edge}/v1/messages`, forced({ name: "x</tool_call>y", input_schema: { type: "object" } })),
      /tools\.0\.name/,
    );
  });

  it("an enum value ok</tool_call> stays inside a forced call", async () => {
    const tool = {
      name: "pick",
      input_schema: { type: "object", properties: { v: { enum: ["ok</tool_call>"] } }, required: ["v"] },
    };
    const res = await postJson(`${edge}/v1/messages`, forced(tool));
    const body = (await res.json()) as { stop_reason: string; content: { type: string; input?: unknown }[] };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.stop_reason).toBe("tool_use");
    expect(body.content.filter((b) => b.type === "tool_use").map((b) => b.input)).toEqual([{ v: "ok</tool_call>" }]);
    expect(body.content.filter((b) => b.type === "text")).toEqual([]);
  });
});
