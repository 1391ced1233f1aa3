/** The Worker's bindings (wrangler.toml). */
import type { EdgeVars } from "./config.ts";
import type { SessionDO } from "./session-do.ts";

export interface Env extends EdgeVars {
  SESSIONS: DurableObjectNamespace<SessionDO>;
}
