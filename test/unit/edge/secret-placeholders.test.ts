/**
 * Issue 30 item 6 (M4/M5): outside FRONTIER_DEV=1 the edge refuses placeholder secrets and every
 * spelling of the development ones (case, separators, whitespace), digests of development or
 * placeholder tokens, and a FRONTIER_DEV that is neither "1" nor unset.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../edge/config/config.ts";
import { ConfigError } from "../../../edge/core/config-values.ts";
import { DEV_ADMIN_TOKEN, DEV_ID_SECRET, DEV_WORKER_TOKEN } from "../../../shared/dev-secrets.ts";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

const deployed = {
  API_KEYS: JSON.stringify({ ["b".repeat(64)]: "acme" }),
  ID_SECRET: "kq3Yv0pV_8N2mRzT7cXwLd4h",
  WORKER_TOKEN: "Wt9dQ2xLr7Vb0ZpK4sHn6Ty1",
  MODEL_IDS: "m",
  WORKER_URLS: "http://10.0.0.5:50061",
};

describe("the edge refuses placeholder and development-variant secrets outside dev", () => {
  it.each([
    ["ID_SECRET", { ID_SECRET: DEV_ID_SECRET.toUpperCase() }],
    ["ID_SECRET", { ID_SECRET: ` ${DEV_ID_SECRET} ` }],
    ["ID_SECRET", { ID_SECRET: "changeme-changeme-changeme" }],
    ["ID_SECRET", { ID_SECRET: "<your-id-secret-here>" }],
    ["WORKER_TOKEN", { WORKER_TOKEN: `${DEV_WORKER_TOKEN}\n` }],
    ["WORKER_TOKEN", { WORKER_TOKEN: "xxxxxxxxxxxxxxxxxxxxxxxx" }],
    ["WORKER_TOKEN", { WORKER_TOKEN: "your-token-here-0000000" }],
    ["WORKER_TOKEN", { WORKER_TOKEN: "a-real-looking-token-but-newline\n" }],
    ["ADMIN_TOKEN_SHA256", { ADMIN_TOKEN_SHA256: sha256(`${DEV_ADMIN_TOKEN}\n`) }],
    ["ADMIN_TOKEN_SHA256", { ADMIN_TOKEN_SHA256: sha256("changeme") }],
    ["API_KEYS", { API_KEYS: JSON.stringify({ [sha256("SK-FRONTIER-LOCAL")]: "local" }) }],
    ["POOL_WORKER_TOKENS", { POOL_WORKER_TOKENS: JSON.stringify({ "gpu-1": sha256("your-token-here") }) }],
    ["FRONTIER_DEV", { FRONTIER_DEV: "true" }],
  ])("refuses %s %j", (name, override) => {
    expect(() => parseConfig({ ...deployed, ...override })).toThrow(ConfigError);
    expect(() => parseConfig({ ...deployed, ...override })).toThrow(new RegExp(name));
  });

  it("accepts them all in local development, and real secrets anywhere", () => {
    expect(() => parseConfig({ ...deployed, ID_SECRET: ` ${DEV_ID_SECRET} `, FRONTIER_DEV: "1" })).not.toThrow();
    expect(() =>
      parseConfig({ ...deployed, WORKER_TOKEN: "xxxxxxxxxxxxxxxxxxxxxxxx", FRONTIER_DEV: "1" }),
    ).not.toThrow();
    expect(parseConfig({ ...deployed, FRONTIER_DEV: "0" }).dev).toBe(false);
    expect(parseConfig(deployed).dev).toBe(false);
  });
});
