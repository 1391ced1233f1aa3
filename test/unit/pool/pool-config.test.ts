import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../edge/config/config.ts";
import { ConfigError } from "../../../edge/core/config-values.ts";

const base = {
  FRONTIER_DEV: "1",
  API_KEYS: "{}",
  ID_SECRET: "frontier-dev-id-secret-change-me",
  MODEL_IDS: "frontier-test",
  WORKER_TOKEN: "frontier-dev-worker-token-change-me",
};
const HASH = "a".repeat(64);

describe("pool configuration", () => {
  it("puts WORKER_URLS in the home region and orders the home region first", () => {
    const config = parseConfig({
      ...base,
      WORKER_URLS: "http://w1:1/",
      HOME_REGION: "eu",
      REGIONS: JSON.stringify({
        us: { location_hint: "enam", workers: ["http://us:1"] },
        eu: { location_hint: "weur" },
      }),
    });
    expect(config.homeRegion).toBe("eu");
    expect(config.regions.map((r) => [r.name, r.locationHint, r.workers])).toEqual([
      ["eu", "weur", ["http://w1:1"]],
      ["us", "enam", ["http://us:1"]],
    ]);
    expect(config.workerUrls).toEqual(["http://w1:1", "http://us:1"]);
  });

  it("allows a pool of registered workers only when registration is configured", () => {
    expect(() => parseConfig({ ...base })).toThrow(ConfigError);
    const config = parseConfig({ ...base, POOL_TOKEN_SHA256: HASH, ADMIN_TOKEN_SHA256: HASH.toUpperCase() });
    expect(config.regions).toEqual([{ name: "local", locationHint: undefined, workers: [] }]);
    expect(config.adminTokenHash).toBe(HASH);
  });

  it("refuses malformed regions and token digests", () => {
    for (const broken of [
      { REGIONS: "[]" },
      { REGIONS: '{"us": {"location_hint": "moon"}}' },
      { REGIONS: '{"US!": {}}' },
      { REGIONS: '{"us": {"workers": ["ftp://x"]}}' },
      { POOL_TOKEN_SHA256: "plain-token" },
      { ADMIN_TOKEN_SHA256: "abc" },
      { HEARTBEAT_TIMEOUT_MS: "0" },
    ]) {
      expect(() => parseConfig({ ...base, WORKER_URLS: "http://w:1", ...broken })).toThrow(ConfigError);
    }
  });
});
