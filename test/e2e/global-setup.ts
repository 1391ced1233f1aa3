import type { TestProject } from "vitest/node";
import { setupStack } from "../support/stack-setup.ts";

/** Real clients against the stack, with the test-only scripted tool policy on the worker. */
export default function setup(project: TestProject): Promise<() => Promise<void>> {
  return setupStack(project, { FRONTIER_TEST_POLICY: "scripted-tools" });
}
