import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../edge/config/config.ts";
import { ConfigError } from "../../../edge/core/config-values.ts";
import { ApiError } from "../../../edge/core/errors.ts";
import { identifyCaller, identifyKey, sha256Hex } from "../../../edge/tenancy/auth.ts";
import { issueKey } from "../../../edge/tenancy/keys/key-digest.ts";
import { parseApiKey } from "../../../edge/tenancy/keys/key-format.ts";

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

describe("identifyCaller", () => {
  const config = { apiKeys: new Map([[LOCAL_HASH, "local"]]), idSecret: vars.ID_SECRET };
  const tenantOf = async (headers: Headers) => (await identifyCaller(headers, config)).tenant;
  const refusal = (headers: Headers) => identifyCaller(headers, config).catch((e: unknown) => e);

  it("hashes the documented local key to its configured digest", async () => {
    expect(await sha256Hex("sk-frontier-local")).toBe(LOCAL_HASH);
  });

  it("accepts x-api-key and Authorization: Bearer", async () => {
    expect(await tenantOf(new Headers({ "x-api-key": "sk-frontier-local" }))).toBe("local");
    expect(await tenantOf(new Headers({ authorization: "Bearer sk-frontier-local" }))).toBe("local");
  });

  it("answers 401 for a missing or unknown key", async () => {
    for (const headers of [
      new Headers(),
      new Headers({ "x-api-key": "nope" }),
      new Headers({ authorization: "Basic x" }),
    ]) {
      const error = await refusal(headers);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(401);
      expect((error as ApiError).type).toBe("authentication_error");
    }
  });

  it("names a run-time key's tenant and key id from its spelling, with the digest its authority checks", async () => {
    const issued = await issueKey(vars.ID_SECRET, { kind: "api", tenant: "acme-co" });
    expect(issued.value).toMatch(/^sk-fr-acme-co-[a-z2-7]{12}-[a-z2-7]{68}$/);
    const caller = await identifyCaller(new Headers({ "x-api-key": issued.value }), config);
    expect(caller).toEqual({
      tenant: "acme-co",
      keyId: issued.keyId,
      credential: { kind: "runtime", digest: issued.digest },
      invalidKeyMessage: "invalid x-api-key",
    });
    // The digest is keyed: neither the secret nor the key hashes to it without the edge's secret.
    const secret = parseApiKey(issued.value)?.secret ?? "";
    expect([await sha256Hex(issued.value), await sha256Hex(secret)]).not.toContain(issued.digest);
  });

  it("identifies a key however a protocol carried it, refusing with that protocol's messages", async () => {
    const messages = { missing: "send a key", invalid: "not a key of ours" };
    const issued = await issueKey(vars.ID_SECRET, { kind: "api", tenant: "acme" });
    const caller = await identifyKey(issued.value, config, messages);
    expect(caller).toMatchObject({ tenant: "acme", keyId: issued.keyId, invalidKeyMessage: "not a key of ours" });
    expect(await identifyKey("sk-frontier-local", config, messages)).toMatchObject({ tenant: "local" });
    const flipped = issued.value.slice(0, -1) + (issued.value.endsWith("a") ? "b" : "a");
    for (const [key, message] of [
      [undefined, "send a key"],
      ["", "send a key"],
      ["nope", "not a key of ours"],
      [flipped, "not a key of ours"],
    ] as const) {
      const error = await identifyKey(key, config, messages).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 401, type: "authentication_error", message });
    }
  });

  it("refuses a key the edge never issued from its spelling: another check, tenant, id or secret", async () => {
    const issued = await issueKey(vars.ID_SECRET, { kind: "api", tenant: "acme" });
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === "a" ? "b" : "a") + text.slice(at + 1);
    const forged = [
      flip(issued.value, issued.value.length - 1), // the check
      issued.value.replace("sk-fr-acme-", "sk-fr-acmf-"), // another tenant
      flip(issued.value, "sk-fr-acme-".length), // the key id
      flip(issued.value, "sk-fr-acme-".length + 13), // the secret
      (await issueKey("another-deployment-secret", { kind: "api", tenant: "acme" })).value,
    ];
    for (const key of forged) {
      const error = await refusal(new Headers({ "x-api-key": key }));
      expect((error as ApiError).status).toBe(401);
    }
  });
});
