import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../edge/config/config.ts";
import { workerUrlAllowed } from "../../../edge/config/registration.ts";
import { ConfigError } from "../../../edge/core/config-values.ts";
import { DEV_DIGESTS, DEV_ID_SECRET, DEV_WORKER_TOKEN } from "../../../shared/dev-secrets.ts";

const deployed = {
  API_KEYS: JSON.stringify({ ["b".repeat(64)]: "acme" }),
  ID_SECRET: "a-real-secret-of-enough-length",
  WORKER_TOKEN: "a-real-worker-token-of-length",
  MODEL_IDS: "m",
  WORKER_URLS: "http://10.0.0.5:50061",
};

describe("no development secret outside FRONTIER_DEV=1", () => {
  it("accepts a deployment with its own secrets", () => {
    const config = parseConfig(deployed);
    expect(config.dev).toBe(false);
    expect(config.allowedWorkerUrls).toEqual([]);
  });

  it.each([
    ["ID_SECRET", { ID_SECRET: DEV_ID_SECRET }],
    ["WORKER_TOKEN", { WORKER_TOKEN: DEV_WORKER_TOKEN }],
    ["ADMIN_TOKEN_SHA256", { ADMIN_TOKEN_SHA256: DEV_DIGESTS.admin }],
    ["POOL_TOKEN_SHA256", { POOL_TOKEN_SHA256: "c".repeat(64) }],
    ["API_KEYS", { API_KEYS: JSON.stringify({ [DEV_DIGESTS.apiKey]: "local" }) }],
  ])("refuses %s at its development default", (name, override) => {
    expect(() => parseConfig({ ...deployed, ...override })).toThrow(new RegExp(name));
    expect(() => parseConfig({ ...deployed, ...override, FRONTIER_DEV: "1" })).not.toThrow();
  });

  it("refuses missing secrets in any mode", () => {
    expect(() => parseConfig({ ...deployed, ID_SECRET: undefined })).toThrow(ConfigError);
    expect(() => parseConfig({ ...deployed, WORKER_TOKEN: "", FRONTIER_DEV: "1" })).toThrow(ConfigError);
  });
});

describe("worker registration", () => {
  it("parses per-worker token digests", () => {
    const config = parseConfig({ ...deployed, POOL_WORKER_TOKENS: JSON.stringify({ "gpu-1": "D".repeat(64) }) });
    expect(config.workerTokenHashes.get("gpu-1")).toBe("d".repeat(64));
    expect(() => parseConfig({ ...deployed, POOL_WORKER_TOKENS: '{"gpu-1":"plain"}' })).toThrow(ConfigError);
  });

  it("matches worker URLs against CIDRs, addresses and host patterns (with optional ports)", () => {
    const config = parseConfig({
      ...deployed,
      POOL_ALLOWED_WORKER_URLS: "10.1.0.0/16, 192.168.0.7:50061, *.gpu.internal, edge-gpu.example.com:443",
    });
    const allowed = (url: string) => workerUrlAllowed(url, config.allowedWorkerUrls);
    expect(allowed("http://10.1.200.3:50061")).toBe(true);
    expect(allowed("http://10.2.0.1:50061")).toBe(false);
    expect(allowed("http://192.168.0.7:50061")).toBe(true);
    expect(allowed("http://192.168.0.7:8080")).toBe(false);
    expect(allowed("http://a.gpu.internal:1")).toBe(true);
    expect(allowed("http://gpu.internal.evil.com:1")).toBe(false);
    expect(allowed("http://evilgpu.internal:1")).toBe(false);
    expect(allowed("https://edge-gpu.example.com")).toBe(true);
    expect(allowed("http://edge-gpu.example.com")).toBe(false);
    expect(allowed("http://127.0.0.1:50061")).toBe(false);
    expect(() => parseConfig({ ...deployed, POOL_ALLOWED_WORKER_URLS: "10.0.0.0/40" })).toThrow(ConfigError);
    expect(() => parseConfig({ ...deployed, POOL_ALLOWED_WORKER_URLS: "http://x" })).toThrow(ConfigError);
  });

  it("allows only loopback by default in local development, nothing otherwise", () => {
    const dev = parseConfig({ ...deployed, FRONTIER_DEV: "1" });
    expect(workerUrlAllowed("http://127.0.0.1:5", dev.allowedWorkerUrls)).toBe(true);
    expect(workerUrlAllowed("http://localhost:5", dev.allowedWorkerUrls)).toBe(true);
    expect(workerUrlAllowed("http://169.254.169.254", dev.allowedWorkerUrls)).toBe(false);
  });
});
