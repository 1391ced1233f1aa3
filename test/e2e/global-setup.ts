import type { TestProject } from "vitest/node";
import { ensureFamilyModel } from "../../native/model/family-model.ts";
import { startFakeWeb } from "../support/fake-web.ts";
import { setupFamilyStack, setupStack } from "../support/stack-setup.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The local fake web (SearXNG JSON API + pages) the worker's hosted tools use. */
    fakeWebUrl: string;
  }
}

/**
 * Real clients against the stack, with the test-only scripted tool policy on the worker, and hosted
 * web_search / web_fetch served from a local fake SearXNG and local pages (loopback allowed); beside
 * it (started in parallel) a second stack on the Qwen3-vocabulary model for the tool loops under
 * real BPE.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const web = await startFakeWeb();
  project.provide("fakeWebUrl", web.url);
  const env = {
    FRONTIER_TEST_POLICY: "scripted-tools",
    FRONTIER_SEARCH_PROVIDER: "searxng",
    FRONTIER_SEARXNG_URL: web.url,
    FRONTIER_WEB_FETCH: "on",
    FRONTIER_FETCH_ALLOW_LOOPBACK: "1",
    FRONTIER_SERVER_TOOL_STEPS: "3",
  };
  const started = await Promise.allSettled([
    setupStack(project, env),
    ensureFamilyModel("qwen3").then((model) => setupFamilyStack(project, model, env)),
  ]);
  const stops = started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const stopAll = async () => {
    await Promise.all(stops.map((stop) => stop()));
    await web.close();
  };
  const failed = started.find((r) => r.status === "rejected");
  if (failed) {
    await stopAll();
    throw failed.reason;
  }
  return stopAll;
}
