/**
 * Docs that run: every shell and code example of README.md and docs/ not marked
 * `<!-- not-runnable: … -->` (test/support/doc-examples.ts) runs against this tier's stack, and a
 * broken one fails here. The examples name the local edge as `http://127.0.0.1:8787` (what
 * `npm start` serves); that URL is replaced by the test stack's. Shell examples run under
 * `bash -e -o pipefail` with `curl` failing on an HTTP error (`--fail-with-body`); code examples run
 * with tsx from the repository (their imports resolve to its node_modules).
 */
import { execFile } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, inject, it } from "vitest";
import { REPO_ROOT } from "../../scripts/stack.ts";
import { type DocExample, docExamples } from "../support/doc-examples.ts";

const run = promisify(execFile);
const edgeUrl = inject("edgeUrl");
const scratch = join(REPO_ROOT, ".state", `doc-examples-${process.pid}`);
const runnable = docExamples().filter((e) => e.notRunnable === undefined);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function local(code: string): string {
  return code.replaceAll("http://127.0.0.1:8787", edgeUrl);
}

async function runExample(example: DocExample, index: number): Promise<string> {
  const options = { cwd: REPO_ROOT, timeout: 60_000, maxBuffer: 16 << 20 };
  if (example.runner === "sh") {
    const prelude = 'curl() { command curl --fail-with-body --silent --show-error "$@"; }\n';
    return (await run("bash", ["-e", "-o", "pipefail", "-c", prelude + local(example.code)], options)).stdout;
  }
  mkdirSync(scratch, { recursive: true });
  const file = join(scratch, `example-${index}.mts`);
  writeFileSync(file, local(example.code));
  return (await run(join(REPO_ROOT, "node_modules/.bin/tsx"), [file], options)).stdout;
}

describe("examples in README.md and docs/", () => {
  it("has examples to run", () => {
    expect(runnable.length).toBeGreaterThan(0);
  });

  it.each(runnable.map((e, i) => [`${e.file}:${e.line} (${e.lang})`, e, i] as const))(
    "%s runs",
    async (_where, example, index) => {
      await expect(runExample(example, index)).resolves.toBeTypeOf("string");
    },
  );
});
