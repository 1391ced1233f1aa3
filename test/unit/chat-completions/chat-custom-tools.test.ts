/** Chat Completions custom (freeform) tools: refused with a 400 that names the field and the reason. */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../edge/core/check.ts";
import { validateChatRequest } from "../../../edge/protocols/chat/validate.ts";

const custom = { type: "custom", custom: { name: "apply_patch", format: { type: "text" } } };

describe("custom tools on /v1/chat/completions", () => {
  it("refuses them naming tools.N.type and pointing at /v1/responses", () => {
    const body = { model: "m", messages: [{ role: "user", content: "hi" }], tools: [custom] };
    let error: unknown;
    try {
      validateChatRequest(body);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toBe(
      "tools.0.type: Custom (freeform) tools are not served on /v1/chat/completions yet; /v1/responses serves them (grammar included), or declare a function tool",
    );
  });
});
