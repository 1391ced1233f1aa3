import type { TestProject } from "vitest/node";
import { ensureFamilyModel } from "../../native/model/family-model.ts";
import { setupFamilyStack, setupStack } from "../support/stack-setup.ts";

/**
 * Real clients against the stack, with the test-only scripted tool policy on the worker; beside it
 * (started in parallel) a second stack on the Qwen3-vocabulary model for the tool loops under real BPE.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const env = { FRONTIER_TEST_POLICY: "scripted-tools" };
  const started = await Promise.allSettled([
    setupStack(project, env),
    ensureFamilyModel("qwen3").then((model) => setupFamilyStack(project, model, env)),
  ]);
  const stops = started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const stopAll = async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
  const failed = started.find((r) => r.status === "rejected");
  if (failed) {
    await stopAll();
    throw failed.reason;
  }
  return stopAll;
}
