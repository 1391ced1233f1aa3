import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  DEV_ADMIN_TOKEN,
  DEV_ID_SECRET,
  DEV_WORKER_TOKEN,
  isLoopbackHost,
  PUBLIC_TOKEN_DIGESTS,
  publicTokenVariants,
  secretProblem,
} from "../../../shared/dev-secrets.ts";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("secrets a deployment cannot use", () => {
  it("the digest table is exactly the digests of the public token variants", () => {
    expect(new Set(publicTokenVariants().map(sha256))).toEqual(PUBLIC_TOKEN_DIGESTS);
    expect(PUBLIC_TOKEN_DIGESTS.has(sha256(`${DEV_ADMIN_TOKEN}\n`))).toBe(true);
    expect(PUBLIC_TOKEN_DIGESTS.has(sha256("SK-FRONTIER-LOCAL"))).toBe(true);
  });

  it.each([
    [DEV_ID_SECRET, /development default/],
    [` ${DEV_WORKER_TOKEN}`, /development default/],
    [`${DEV_ID_SECRET}\n`, /development default/],
    [DEV_ID_SECRET.toUpperCase(), /development default/],
    [DEV_WORKER_TOKEN.replaceAll("-", "_"), /development default/],
    ["changeme-changeme-changeme", /placeholder/],
    ["CHANGE_ME_PLEASE_0000000", /placeholder/],
    ["<secret-goes-in-here>", /template placeholder/],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the unexpanded shell placeholder is the point
    ["${FRONTIER_WORKER_TOKEN}", /template placeholder/],
    ["{{ worker_token }}", /template placeholder/],
    ["xxxxxxxxxxxxxxxxxxxx", /one character repeated/],
    ["----------------", /one character repeated/],
    ["your-token-here-please", /placeholder/],
    ["insert your secret here", /placeholder/],
    ["1234567890123456", /run of digits/],
    ["a-real-secret-of-enough-length\n", /whitespace/],
  ])("refuses %j", (value, reason) => {
    expect(secretProblem(value)).toMatch(reason);
  });

  it.each(["a-real-secret-of-enough-length", "kq3Yv0pV_8N2mRzT7cXwLd4h", "3f9c2a7d1e8b4c6a9f0e2d3c4b5a6978"])(
    "accepts %j",
    (value) => {
      expect(secretProblem(value)).toBeUndefined();
    },
  );

  it("loopback is 127/8, ::1 and localhost; every-interface binds are not", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"]) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ["0.0.0.0", "::", "10.0.0.5", "192.168.1.2", "example.com", "128.0.0.1", "::ffff:10.0.0.1"]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});
