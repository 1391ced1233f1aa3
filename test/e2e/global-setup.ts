import type { TestProject } from "vitest/node";
import { startFakeWeb } from "../support/fake-web.ts";
import { setupStack } from "../support/stack-setup.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The local fake web (SearXNG JSON API + pages) the worker's hosted tools use. */
    fakeWebUrl: string;
  }
}

/**
 * Real clients against the stack, with the test-only scripted tool policy on the worker, and hosted
 * web_search / web_fetch served from a local fake SearXNG and local pages (loopback allowed).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const web = await startFakeWeb();
  project.provide("fakeWebUrl", web.url);
  const stop = await setupStack(project, {
    FRONTIER_TEST_POLICY: "scripted-tools",
    FRONTIER_SEARCH_PROVIDER: "searxng",
    FRONTIER_SEARXNG_URL: web.url,
    FRONTIER_WEB_FETCH: "on",
    FRONTIER_FETCH_ALLOW_LOOPBACK: "1",
    FRONTIER_SERVER_TOOL_STEPS: "3",
  });
  return async () => {
    await stop();
    await web.close();
  };
}
