/** `compaction` items: sealed per tenant and purpose, opened into the summary message, refused naming the field otherwise. */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../edge/core/check.ts";
import {
  COMPACTION_SUMMARY_HEADING,
  openCompaction,
  sealCompaction,
  summaryOf,
} from "../../../edge/protocols/responses/request/compaction-items.ts";
import { sealReasoning, unsealReasoningItems } from "../../../edge/protocols/responses/request/encrypted-reasoning.ts";
import { withSummaryRequest } from "../../../edge/protocols/responses/request/summary-request.ts";
import { validateResponsesRequest } from "../../../edge/protocols/responses/request/validate.ts";

const SECRET = "test-secret-0123456789abcdef";

const request = (input: unknown[]) => validateResponsesRequest({ model: "m", input });

describe("compaction items", () => {
  it("open only for the tenant and purpose they were sealed for", async () => {
    const blob = await sealCompaction(SECRET, "t1", "the summary");
    expect(await openCompaction(SECRET, "t1", blob)).toBe("the summary");
    expect(await openCompaction(SECRET, "t2", blob)).toBeUndefined();
    expect(await openCompaction("another-secret-0123456789", "t1", blob)).toBeUndefined();
    // A reasoning blob of the same tenant is not a compaction.
    expect(await openCompaction(SECRET, "t1", await sealReasoning(SECRET, "t1", "the summary"))).toBeUndefined();
  });

  it("render as a user message with the summary under the heading, keeping the item id", async () => {
    const blob = await sealCompaction(SECRET, "t1", "did X, next Y");
    const body = request([
      { type: "message", role: "user", content: "start" },
      { type: "compaction", id: "cmp_1", encrypted_content: blob },
      { type: "compaction_summary", encrypted_content: blob },
    ]);
    const items = await unsealReasoningItems(SECRET, "t1", body.input);
    expect(items).toEqual([
      { type: "message", role: "user", text: "start" },
      { type: "message", role: "user", text: `${COMPACTION_SUMMARY_HEADING}did X, next Y`, id: "cmp_1" },
      { type: "message", role: "user", text: `${COMPACTION_SUMMARY_HEADING}did X, next Y` },
    ]);
  });

  it("refuse a foreign or empty blob naming input.N.encrypted_content", async () => {
    const foreign = await sealCompaction(SECRET, "t2", "not yours");
    const body = request([
      { type: "message", role: "user", content: "hi" },
      { type: "compaction", encrypted_content: foreign },
    ]);
    const refused = await unsealReasoningItems(SECRET, "t1", body.input).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).path).toEqual(["input", 1, "encrypted_content"]);
    expect(() => request([{ type: "compaction", encrypted_content: "" }])).toThrow(/input\.0\.encrypted_content/);
  });

  it("take compaction_trigger only as the last item, and the summary turn asks for text with no tools", () => {
    const triggered = request([{ type: "message", role: "user", content: "hi" }, { type: "compaction_trigger" }]);
    expect(triggered.compaction_trigger).toBe(true);
    expect(triggered.input.length).toBe(1);
    expect(request([{ type: "message", role: "user", content: "hi" }]).compaction_trigger).toBeUndefined();
    expect(() => request([{ type: "compaction_trigger" }, { type: "message", role: "user", content: "hi" }])).toThrow(
      /input\.0\.type: compaction_trigger must be the last input item/,
    );
    expect(() => request([{ type: "compaction_trigger" }])).toThrow(/^input: Nothing to compact/);
    const { body, items } = withSummaryRequest(triggered, triggered.input);
    expect(body.tool_choice).toBe("none");
    expect(body.max_output_tokens).toBe(2048);
    expect(items.length).toBe(2);
    expect(items[1]).toMatchObject({ type: "message", role: "user" });
  });

  it("summaryOf takes the message text, else the reasoning", () => {
    const message = {
      type: "message" as const,
      id: "m",
      status: "completed" as const,
      role: "assistant" as const,
      content: [{ type: "output_text" as const, text: "sum", annotations: [] as [], logprobs: [] as [] }],
    };
    const reasoning = {
      type: "reasoning" as const,
      id: "r",
      status: "completed" as const,
      summary: [] as [],
      content: [{ type: "reasoning_text" as const, text: "thought" }],
    };
    expect(summaryOf([reasoning, message])).toBe("sum");
    expect(summaryOf([reasoning])).toBe("thought");
  });
});
