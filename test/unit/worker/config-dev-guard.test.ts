/**
 * Issue 30 item 6 (M5/M6): the worker's start-up refuses FRONTIER_DEV=1 on a non-loopback bind,
 * the test-only sampling policy outside dev, and placeholder or development-variant secrets
 * outside dev, each with a message naming the setting.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../gpu-worker/config.ts";
import { DEV_WORKER_TOKEN } from "../../../shared/dev-secrets.ts";

const dev = { FRONTIER_DEV: "1" };
/** Real-looking secrets for a deployment (outside dev). */
const deployed = {
  FRONTIER_ID_SECRET: "kq3Yv0pV_8N2mRzT7cXwLd4h",
  FRONTIER_CAPABILITY_KEY: "mRBB-vVfVPbsqsL45vOhAXeGALax3BCi8NDCYgvglWc",
  FRONTIER_WORKER_TOKEN: "Wt9dQ2xLr7Vb0ZpK4sHn6Ty1",
};

describe("FRONTIER_DEV=1 binds loopback only", () => {
  it.each(["0.0.0.0", "::", "10.0.0.5", "gpu-1.internal"])("refuses FRONTIER_WORKER_HOST=%s", (host) => {
    expect(() => loadConfig({ ...dev, FRONTIER_WORKER_HOST: host })).toThrow(
      new RegExp(`FRONTIER_DEV=1 .*loopback only.*FRONTIER_WORKER_HOST is "${host.replace(/\./g, "\\.")}"`),
    );
  });

  it("refuses a non-loopback metrics listener in dev", () => {
    const ops = { FRONTIER_METRICS_PORT: "9464", FRONTIER_METRICS_TOKEN: "a-long-enough-metrics-token" };
    expect(() => loadConfig({ ...dev, ...ops, FRONTIER_METRICS_HOST: "0.0.0.0" })).toThrow(/FRONTIER_METRICS_HOST/);
    expect(loadConfig({ ...dev, ...ops, FRONTIER_METRICS_HOST: "127.0.0.1" }).ops?.host).toBe("127.0.0.1");
  });

  it("accepts loopback in dev, and any interface outside it (plaintext there only when allowed)", () => {
    expect(loadConfig({ ...dev, FRONTIER_WORKER_HOST: "127.0.0.1" }).host).toBe("127.0.0.1");
    expect(loadConfig({ ...dev, FRONTIER_WORKER_HOST: "::1" }).host).toBe("::1");
    const plaintext = { FRONTIER_ALLOW_PLAINTEXT: "1" };
    expect(loadConfig({ ...deployed, ...plaintext, FRONTIER_WORKER_HOST: "0.0.0.0" }).host).toBe("0.0.0.0");
  });

  it("refuses a FRONTIER_DEV that is neither 1 nor unset", () => {
    expect(() => loadConfig({ FRONTIER_DEV: "yes" })).toThrow(/FRONTIER_DEV must be "1"/);
  });
});

describe("test-only and placeholder settings outside dev", () => {
  it("FRONTIER_TEST_POLICY needs FRONTIER_DEV=1", () => {
    expect(() => loadConfig({ ...deployed, FRONTIER_TEST_POLICY: "scripted-tools" })).toThrow(
      /FRONTIER_TEST_POLICY is a test-only sampling policy: it needs FRONTIER_DEV=1/,
    );
    expect(loadConfig({ ...dev, FRONTIER_TEST_POLICY: "scripted-tools" }).testPolicy).toBe("scripted-tools");
  });

  it.each([
    ["FRONTIER_WORKER_TOKEN", DEV_WORKER_TOKEN.toUpperCase(), /development default/],
    ["FRONTIER_WORKER_TOKEN", `${DEV_WORKER_TOKEN}\n`, /development default/],
    ["FRONTIER_WORKER_TOKEN", "changeme-changeme-changeme", /placeholder/],
    ["FRONTIER_WORKER_TOKEN", "<worker-token-goes-here>", /placeholder/],
    ["FRONTIER_WORKER_TOKEN", "Wt9dQ2xLr7Vb0ZpK4sHn6Ty1 ", /whitespace/],
  ])("refuses %s=%j", (name, value, reason) => {
    expect(() => loadConfig({ ...deployed, [name]: value })).toThrow(new RegExp(`${name} .*`));
    expect(() => loadConfig({ ...deployed, [name]: value })).toThrow(reason);
  });

  it("refuses a placeholder metrics token", () => {
    const env = { ...deployed, FRONTIER_METRICS_PORT: "9464", FRONTIER_METRICS_TOKEN: "xxxxxxxxxxxxxxxxxxxx" };
    expect(() => loadConfig(env)).toThrow(/FRONTIER_METRICS_TOKEN .*placeholder/);
  });
});
