import type { Env as EdgeEnv } from "../../edge/env.ts";

declare global {
  namespace Cloudflare {
    interface Env extends EdgeEnv {}
    interface GlobalProps {
      mainModule: typeof import("../../edge/index.ts");
      durableNamespaces: "SessionDO" | "ResponseStoreDO" | "PoolDO" | "UsageDO";
    }
  }
}
