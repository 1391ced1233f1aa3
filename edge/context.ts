/** What every route handler receives besides the request. */
import type { EdgeConfig } from "./config.ts";
import type { Env } from "./env.ts";

export interface RequestContext {
  env: Env;
  config: EdgeConfig;
  requestId: string;
  waitUntil: (promise: Promise<unknown>) => void;
}
