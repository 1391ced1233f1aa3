import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../edge/config/config.ts";
import { ConfigError } from "../../../edge/core/config-values.ts";
import { ApiError } from "../../../edge/core/errors.ts";
import { authenticate, sha256Hex } from "../../../edge/tenancy/auth.ts";

const LOCAL_HASH = "c383444890ea30a3256c522f6be0b5afb155931118fb6a399ef4c61c5a89784a";
const vars = {
  FRONTIER_DEV: "1",
  WORKER_URLS: "http://127.0.0.1:50061, http://127.0.0.1:50062",
  API_KEYS: JSON.stringify({ [LOCAL_HASH]: "local" }),
  ID_SECRET: "frontier-dev-id-secret-change-me",
  MODEL_IDS: "frontier-test",
  KEEPALIVE_MS: "5000",
  WORKER_TOKEN: "frontier-dev-worker-token-change-me",
};

describe("parseConfig", () => {
  it("parses the wrangler vars", () => {
    const config = parseConfig(vars);
    expect(config.workerUrls).toEqual(["http://127.0.0.1:50061", "http://127.0.0.1:50062"]);
    expect(config.apiKeys.get(LOCAL_HASH)).toBe("local");
    expect(config.keepAliveMs).toBe(5000);
    expect(config.headerWaitMs).toBe(2000);
  });

  it("refuses broken configuration", () => {
    for (const broken of [
      { WORKER_URLS: "" },
      { WORKER_URLS: "127.0.0.1:50061" },
      { API_KEYS: "not json" },
      { API_KEYS: '{"sk-plain-key":"t"}' },
      { ID_SECRET: "short" },
      { WORKER_TOKEN: "short" },
      { MODEL_IDS: " , " },
      { KEEPALIVE_MS: "-1" },
    ]) {
      expect(() => parseConfig({ ...vars, ...broken })).toThrow(ConfigError);
    }
  });
});

describe("authenticate", () => {
  const keys = new Map([[LOCAL_HASH, "local"]]);

  it("hashes the documented local key to its configured digest", async () => {
    expect(await sha256Hex("sk-frontier-local")).toBe(LOCAL_HASH);
  });

  it("accepts x-api-key and Authorization: Bearer", async () => {
    expect(await authenticate(new Headers({ "x-api-key": "sk-frontier-local" }), keys)).toBe("local");
    expect(await authenticate(new Headers({ authorization: "Bearer sk-frontier-local" }), keys)).toBe("local");
  });

  it("answers 401 for a missing or unknown key", async () => {
    for (const headers of [
      new Headers(),
      new Headers({ "x-api-key": "nope" }),
      new Headers({ authorization: "Basic x" }),
    ]) {
      const error = await authenticate(headers, keys).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(401);
      expect((error as ApiError).type).toBe("authentication_error");
    }
  });
});
