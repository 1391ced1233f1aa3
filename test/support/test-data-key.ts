/** A tenant's data key for tests that drive the checkpoint store directly (the edge derives real ones). */
import { createHash } from "node:crypto";
import type { TenantDataKey } from "../../gpu-worker/checkpoints/state/sealed-file.ts";

/** The same 32 bytes for the same tenant in every test; another tenant's never opens its files. */
export function testDataKey(tenant: string, salt = ""): TenantDataKey {
  return { tenant, bytes: createHash("sha256").update(`frontier-test-data-key\u0000${salt}\u0000${tenant}`).digest() };
}
