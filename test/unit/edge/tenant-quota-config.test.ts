/** The Responses record quota's configuration (tenant-limits.ts): defaults, MiB with decimals, per-tenant overrides, refusals. */
import { describe, expect, it } from "vitest";
import { parseTenantLimits } from "../../../edge/config/tenant-limits.ts";

const MIB = 1024 * 1024;

describe("tenant record quota configuration", () => {
  it("defaults to 1024 MiB per tenant and 32 MiB per stored input", () => {
    const { defaults } = parseTenantLimits({});
    expect(defaults).toMatchObject({ responseStoreBytes: 1024 * MIB, responseRecordBytes: 32 * MIB });
  });

  it("reads the variables (decimals allowed, 0 unlimited) and per-tenant overrides that inherit the rest", () => {
    const config = parseTenantLimits({
      TENANT_RESPONSE_STORE_MB: "0.5",
      TENANT_RESPONSE_INPUT_MB: "0",
      TENANT_LIMITS: JSON.stringify({
        big: { response_store_mb: 4096 },
        small: { concurrent: 2, response_input_mb: 1 },
      }),
    });
    expect(config.defaults).toMatchObject({ responseStoreBytes: MIB / 2, responseRecordBytes: 0 });
    expect(config.overrides.get("big")).toMatchObject({ responseStoreBytes: 4096 * MIB, responseRecordBytes: 0 });
    expect(config.overrides.get("small")).toMatchObject({
      concurrent: 2,
      responseStoreBytes: MIB / 2,
      responseRecordBytes: MIB,
    });
  });

  it("refuses a negative or non-numeric size, naming the variable", () => {
    expect(() => parseTenantLimits({ TENANT_RESPONSE_STORE_MB: "-1" })).toThrow(/TENANT_RESPONSE_STORE_MB/);
    expect(() => parseTenantLimits({ TENANT_LIMITS: JSON.stringify({ t: { response_input_mb: "lots" } }) })).toThrow(
      /TENANT_LIMITS\.t\.response_input_mb/,
    );
  });
});
