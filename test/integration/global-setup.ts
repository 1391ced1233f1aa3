import type { TestProject } from "vitest/node";
import { setupStack } from "../support/stack-setup.ts";

export default function setup(project: TestProject): Promise<() => Promise<void>> {
  return setupStack(project, {});
}
