/**
 * response_format / text.format through the real stack (edge in workerd, worker process, llama.cpp
 * with the random tiny model): the grammar makes even a random model's answer parse and satisfy
 * the schema; schemas the grammar cannot build (or, with strict, cannot guarantee) are a 400 in
 * OpenAI's shape naming the schema's field.
 */
import { describe, expect, inject, it } from "vitest";
import { postJson } from "../support/api.ts";

const edge = inject("edgeUrl");

const WEATHER = {
  type: "object",
  properties: {
    city: { type: "string", maxLength: 12 },
    unit: { enum: ["c", "f"] },
    days: { type: "array", items: { type: "integer", minimum: 0 }, maxItems: 3 },
    windy: { type: "boolean" },
  },
  required: ["city", "unit", "days"],
  additionalProperties: false,
};

/** The schema above, checked by hand (the grammar guarantees it; this proves it). */
function expectWeather(text: string): void {
  const value = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(value).every((k) => k in WEATHER.properties)).toBe(true);
  expect(typeof value.city).toBe("string");
  expect((value.city as string).length).toBeLessThanOrEqual(12);
  expect(["c", "f"]).toContain(value.unit);
  expect(Array.isArray(value.days)).toBe(true);
  const days = value.days as unknown[];
  expect(days.length).toBeLessThanOrEqual(3);
  for (const day of days) expect(Number.isInteger(day) && (day as number) >= 0).toBe(true);
  if ("windy" in value) expect(typeof value.windy).toBe("boolean");
}

interface OpenAiError {
  error: { message: string; type: string; param: string | null };
}

const chat = (body: Record<string, unknown>) =>
  postJson(`${edge}/v1/chat/completions`, {
    model: "m",
    max_tokens: 400,
    messages: [{ role: "user", content: "Weather in Oslo as JSON." }],
    ...body,
  });

describe("Chat Completions response_format", () => {
  it("json_schema (strict): every sampled answer parses and satisfies the schema", async () => {
    for (const seed of [1, 2, 3]) {
      const res = await chat({
        seed,
        response_format: { type: "json_schema", json_schema: { name: "weather", schema: WEATHER, strict: true } },
      });
      const body = (await res.json()) as {
        choices: { message: { content: string }; finish_reason: string }[];
      };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.choices[0]?.finish_reason).toBe("stop");
      expectWeather(body.choices[0]?.message.content ?? "");
    }
  });

  it("json_object: the answer is a JSON object", async () => {
    const res = await chat({ seed: 7, response_format: { type: "json_object" } });
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(res.status).toBe(200);
    const value: unknown = JSON.parse(body.choices[0]?.message.content ?? "");
    expect(typeof value === "object" && value !== null && !Array.isArray(value)).toBe(true);
  });

  it("a schema the grammar cannot build, or strict cannot guarantee, is a 400 naming the field", async () => {
    const huge = { anyOf: Array.from({ length: 7 }, () => ({ $ref: "#" })) };
    const cases: [Record<string, unknown>, RegExp][] = [
      [huge, /more than 4096 nodes/],
      [{ type: "object", properties: { id: { type: "string", pattern: "^a" } } }, /properties\.id\.pattern/],
    ];
    for (const [schema, message] of cases) {
      const res = await chat({
        response_format: { type: "json_schema", json_schema: { name: "x", schema, strict: true } },
      });
      const body = (await res.json()) as OpenAiError;
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(body.error.type).toBe("invalid_request_error");
      expect(body.error.param).toBe("response_format.json_schema.schema");
      expect(body.error.message).toMatch(message);
    }
    let deep: unknown = { type: "string" };
    for (let i = 0; i < 80; i++) deep = { type: "object", properties: { x: deep } };
    const res = await chat({ response_format: { type: "json_schema", json_schema: { name: "x", schema: deep } } });
    expect(res.status).toBe(400);
  });
});

describe("Responses text.format", () => {
  it("json_schema: the output text satisfies the schema and the response echoes the format", async () => {
    const res = await postJson(`${edge}/v1/responses`, {
      model: "m",
      max_output_tokens: 400,
      input: "Weather in Oslo as JSON.",
      text: { format: { type: "json_schema", name: "weather", schema: WEATHER, strict: true } },
    });
    const body = (await res.json()) as {
      output: { type: string; content?: { type: string; text: string }[] }[];
      text: { format: { type: string; name?: string } };
    };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.text.format).toMatchObject({ type: "json_schema", name: "weather" });
    const message = body.output.find((item) => item.type === "message");
    expectWeather(message?.content?.map((part) => part.text).join("") ?? "");
  });
});

describe("Responses custom tool with a Lark grammar", () => {
  it("a forced call's raw input follows the grammar and comes back as custom_tool_call", async () => {
    const definition = 'start: "ping " WORD (" " INT)? LF\n%import common (WORD, INT, LF)';
    const res = await postJson(`${edge}/v1/responses`, {
      model: "m",
      // WORD is unbounded and the random model ends it only when it samples a space or a newline; a
      // budget this size almost always lets it (a CI run with 300 was cut off inside the word).
      max_output_tokens: 1500,
      input: "Ping someone.",
      tools: [{ type: "custom", name: "ping", format: { type: "grammar", syntax: "lark", definition } }],
      tool_choice: { type: "function", name: "ping" },
    });
    const body = (await res.json()) as {
      status: string;
      output: { type: string; name?: string; input?: string }[];
    };
    expect(res.status, JSON.stringify(body)).toBe(200);
    const call = body.output.find((item) => item.type === "custom_tool_call");
    expect(call?.name).toBe("ping");
    if (body.status === "incomplete") {
      // Out of tokens before the grammar's end: what was sampled is still a prefix of its language.
      expect(call?.input).toMatch(/^ping [A-Za-z]*( [0-9]*)?$/);
    } else {
      expect(body.status).toBe("completed");
      expect(call?.input).toMatch(/^ping [A-Za-z]+( [0-9]+)?\n$/);
    }
  });

  it("an unsupported grammar is a 400 naming the definition", async () => {
    const res = await postJson(`${edge}/v1/responses`, {
      model: "m",
      input: "x",
      tools: [
        { type: "custom", name: "t", format: { type: "grammar", syntax: "lark", definition: "%ignore WS\nstart: WS" } },
      ],
    });
    const body = (await res.json()) as OpenAiError;
    expect(res.status).toBe(400);
    expect(body.error.param).toBe("tools.0.format.definition");
  });
});
