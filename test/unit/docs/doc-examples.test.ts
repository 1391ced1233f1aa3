/**
 * Every shell and code example in README.md and docs/ either runs against the local stack (the e2e
 * tier's test/e2e/doc-examples.test.ts runs them) or is marked `<!-- not-runnable: <reason> -->`.
 * This fast check refuses a marker without a reason and an example no runner can run that is not
 * marked, and prints the counts.
 */
import { describe, expect, it } from "vitest";
import { docExamples, examplesIn } from "../../support/doc-examples.ts";

describe("examples in the docs", () => {
  it("reads fences, languages and markers", () => {
    const text = [
      "```sh",
      "echo one",
      "```",
      "<!-- not-runnable: needs a GPU -->",
      "",
      "```ts",
      "const x = 1;",
      "```",
      "```json",
      "{}",
      "```",
      "  ```python",
      "  print(1)",
      "  ```",
    ].join("\n");
    const found = examplesIn("x.md", text);
    expect(found.map((e) => [e.lang, e.runner, e.notRunnable, e.code])).toEqual([
      ["sh", "sh", undefined, "echo one"],
      ["ts", "ts", "needs a GPU", "const x = 1;"],
      ["python", "none", undefined, "print(1)"],
    ]);
  });

  it("each is runnable or marked not runnable with a reason", () => {
    const examples = docExamples();
    const problems = examples.flatMap((e) => {
      const where = `${e.file}:${e.line}`;
      if (e.notRunnable === "") return [`${where}: a not-runnable marker needs a reason`];
      if (e.notRunnable === undefined && e.runner === "none") return [`${where}: ${e.lang} has no runner; mark it`];
      return [];
    });
    expect(problems).toEqual([]);
    const runnable = examples.filter((e) => e.notRunnable === undefined).length;
    process.stdout.write(`doc examples: ${runnable} run, ${examples.length - runnable} marked not runnable\n`);
    expect(runnable).toBeGreaterThan(0);
  });
});
