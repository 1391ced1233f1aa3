/**
 * Per-request capabilities (shared/capability.ts): signed by the edge with a worker's own derived
 * key, verified by that worker (gpu-worker/capability-check.ts) and by WebCrypto alike; refused when
 * expired, for another worker, tampered with, signed with another key, or for another op/tenant/session.
 */
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { requireCapability, verifiedCapability } from "../../../gpu-worker/capability-check.ts";
import { loadConfig } from "../../../gpu-worker/config.ts";
import {
  CAPABILITY_HEADER,
  type Capability,
  NO_SCOPE,
  scopeRefusal,
  signCapability,
  verifyCapability,
  workerKey,
} from "../../../shared/capability.ts";
import { DEV_ID_SECRET } from "../../../shared/dev-secrets.ts";

const MASTER = "edge-master-secret-for-tests-0123";
const NOW = 1_800_000_000;
const cap = (over: Partial<Capability> = {}): Capability => ({
  worker: "worker-1",
  tenant: "tenant-a",
  session: "0".repeat(32),
  ops: ["generate"],
  expires: NOW + 60,
  ...over,
});

describe("capabilities", () => {
  it("derives one key per worker from the master, and a worker's key verifies only its own capabilities", async () => {
    const k1 = await workerKey(MASTER, "worker-1");
    const k2 = await workerKey(MASTER, "worker-2");
    expect(k1.length).toBe(32);
    expect(Buffer.from(k1).equals(Buffer.from(k2))).toBe(false);
    expect(Buffer.from(await workerKey("another-master-secret-000", "worker-1")).equals(Buffer.from(k1))).toBe(false);
    const value = await signCapability(k1, cap());
    const verifier = { key: k1, workerId: "worker-1", now: () => NOW };
    expect(verifiedCapability(verifier, value)).toEqual(cap());
    expect(await verifyCapability(k1, value, { worker: "worker-1", nowSeconds: NOW })).toEqual(cap());
    // worker-2 holds its own key: worker-1's capability does not verify there, nor one signed with k2 for worker-1.
    expect(verifiedCapability({ key: k2, workerId: "worker-2", now: () => NOW }, value)).toBe("bad-mac");
    expect(verifiedCapability(verifier, await signCapability(k2, cap()))).toBe("bad-mac");
  });

  it("refuses an expired capability and one naming another worker", async () => {
    const key = await workerKey(MASTER, "worker-1");
    const verifier = { key, workerId: "worker-1", now: () => NOW };
    expect(verifiedCapability(verifier, await signCapability(key, cap({ expires: NOW - 1 })))).toBe("expired");
    expect(verifiedCapability(verifier, await signCapability(key, cap({ expires: NOW })))).toEqual(
      cap({ expires: NOW }),
    );
    expect(verifiedCapability(verifier, await signCapability(key, cap({ worker: "worker-2" })))).toBe("wrong-worker");
    expect(verifiedCapability(verifier, undefined)).toBe("missing");
    expect(verifiedCapability(verifier, "v1.e30")).toBe("malformed");
    expect(verifiedCapability(verifier, "v2.e30.AAAA")).toBe("malformed");
  });

  it("refuses any change to the signed payload or its MAC", async () => {
    const key = await workerKey(MASTER, "worker-1");
    const verifier = { key, workerId: "worker-1", now: () => NOW };
    const [version, payload = "", mac = ""] = (await signCapability(key, cap())).split(".");
    const forged = Buffer.from(
      JSON.stringify({ w: "worker-1", t: "tenant-b", s: NO_SCOPE, o: ["release_session"], e: NOW + 60 }),
    );
    expect(verifiedCapability(verifier, `${version}.${forged.toString("base64url")}.${mac}`)).toBe("bad-mac");
    const flipped = Buffer.from(mac, "base64url");
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    expect(verifiedCapability(verifier, `${version}.${payload}.${flipped.toString("base64url")}`)).toBe("bad-mac");
    expect(verifiedCapability(verifier, `${version}.${payload}.${mac}`)).toEqual(cap());
  });

  it("covers only its operations, tenant and session", () => {
    const c = cap({ ops: ["generate", "release_session"] });
    const call = { op: "generate" as const, tenant: "tenant-a", session: "0".repeat(32) };
    expect(scopeRefusal(c, call)).toBeUndefined();
    expect(scopeRefusal(c, { ...call, op: "drain" })).toMatch(/does not allow drain/);
    expect(scopeRefusal(c, { ...call, tenant: "tenant-b" })).toMatch(/another tenant/);
    expect(scopeRefusal(c, { ...call, session: "1".repeat(32) })).toMatch(/another session/);
  });

  it("inside a handler: PERMISSION_DENIED for a tenant the capability does not name", async () => {
    const key = await workerKey(MASTER, "worker-1");
    const verifier = { key, workerId: "worker-1" };
    const expires = Math.floor(Date.now() / 1000) + 60;
    const headers = new Headers({ [CAPABILITY_HEADER]: await signCapability(key, cap({ expires })) });
    const call = { op: "generate" as const, tenant: "tenant-a", session: "0".repeat(32) };
    expect(requireCapability(verifier, headers, call).tenant).toBe("tenant-a");
    let denied: unknown;
    try {
      requireCapability(verifier, headers, { ...call, tenant: "tenant-b" });
    } catch (error) {
      denied = error;
    }
    expect(denied).toBeInstanceOf(ConnectError);
    expect((denied as ConnectError).code).toBe(7);
  });

  it("a worker is configured with its derived key only: the dev default is the derivation, refused outside dev", async () => {
    const dev = loadConfig({ FRONTIER_DEV: "1", FRONTIER_WORKER_ID: "worker-7" });
    expect(Buffer.from(dev.capabilityKey).equals(Buffer.from(await workerKey(DEV_ID_SECRET, "worker-7")))).toBe(true);
    expect(Object.keys(dev)).not.toContain("idSecret");
    const own = Buffer.from(await workerKey(MASTER, "worker-7"));
    const env = { FRONTIER_WORKER_ID: "worker-7", FRONTIER_WORKER_TOKEN: "a-real-worker-token-0192837465" };
    expect(
      Buffer.from(loadConfig({ ...env, FRONTIER_CAPABILITY_KEY: own.toString("base64url") }).capabilityKey),
    ).toEqual(own);
    expect(Buffer.from(loadConfig({ ...env, FRONTIER_CAPABILITY_KEY: own.toString("hex") }).capabilityKey)).toEqual(
      own,
    );
    expect(() => loadConfig(env)).toThrow(/FRONTIER_CAPABILITY_KEY must be set/);
    expect(() => loadConfig({ ...env, FRONTIER_CAPABILITY_KEY: "short" })).toThrow(/32 bytes/);
    const devKey = Buffer.from(dev.capabilityKey).toString("base64url");
    expect(() => loadConfig({ ...env, FRONTIER_CAPABILITY_KEY: devKey })).toThrow(/public development secret/);
  });
});
