/**
 * Issue 30 item 6 (M2, M6) in workerd: admin routes refuse what a browser on another site can send —
 * the form-encoded cross-site drain the review reproduced, Basic credentials on a state-changing
 * route, non-JSON bodies — while the CLI's request shape still reaches the route; reads keep Basic
 * for the status page. A dev-mode edge serves loopback clients only.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DEV_ADMIN_TOKEN } from "../../shared/dev-secrets.ts";
import type { ErrorBody } from "./helpers.ts";

const EDGE = "http://edge.test";
const basic = `Basic ${btoa(`admin:${DEV_ADMIN_TOKEN}`)}`;
const bearer = `Bearer ${DEV_ADMIN_TOKEN}`;

function admin(path: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Response> {
  return exports.default.fetch(new Request(`${EDGE}${path}`, init));
}

async function errorOf(response: Response): Promise<ErrorBody["error"]> {
  return ((await response.json()) as ErrorBody).error;
}

describe("state-changing admin routes", () => {
  it("refuse the reproduced cross-site form POST to drain (was 200 drained)", async () => {
    const response = await admin("/admin/workers/http%3A%2F%2F127.0.0.1%3A1/drain", {
      method: "POST",
      headers: {
        authorization: basic,
        origin: "https://evil.example",
        "sec-fetch-site": "cross-site",
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "x=1",
    });
    expect(response.status).toBe(403);
    const error = await errorOf(response);
    expect(error.type).toBe("permission_error");
    expect(error.message).toMatch(/cross-site.*Origin: https:\/\/evil\.example/);
  });

  it.each([
    ["a foreign Origin", { origin: "https://evil.example" }, /Origin: https:\/\/evil\.example/],
    ["Origin null", { origin: "null" }, /Origin: null/],
    ["Sec-Fetch-Site: same-site", { "sec-fetch-site": "same-site" }, /Sec-Fetch-Site: same-site/],
    ["Sec-Fetch-Site: cross-site", { "sec-fetch-site": "cross-site" }, /Sec-Fetch-Site: cross-site/],
  ])("refuse %s even with the Bearer token (403)", async (_name, headers, message) => {
    const response = await admin("/admin/workers/nope/drain", {
      method: "POST",
      headers: { authorization: bearer, ...headers },
    });
    expect(response.status).toBe(403);
    expect((await errorOf(response)).message).toMatch(message);
  });

  it.each([
    ["application/x-www-form-urlencoded", "a=1"],
    ["multipart/form-data; boundary=x", "--x--"],
    ["text/plain", "{}"],
  ])("refuse a %s body (415)", async (type, body) => {
    const response = await admin("/admin/workers/nope/drain", {
      method: "POST",
      headers: { authorization: bearer, "content-type": type },
      body,
    });
    expect(response.status).toBe(415);
    expect((await errorOf(response)).message).toMatch(/no body or a JSON one/);
  });

  it("refuse Basic credentials (401 without a Basic challenge)", async () => {
    const response = await admin("/admin/workers/nope/drain", { method: "POST", headers: { authorization: basic } });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBeNull();
  });

  it("let the CLI's request through (Bearer, no body; same-origin JSON too) to the route", async () => {
    const shapes: Record<string, string>[] = [
      { authorization: bearer, "sec-fetch-mode": "cors" },
      { authorization: bearer, origin: EDGE, "sec-fetch-site": "same-origin", "content-type": "application/json" },
    ];
    for (const headers of shapes) {
      const response = await admin("/admin/workers/no-such-worker/drain", { method: "POST", headers });
      expect(response.status).toBe(404);
      expect((await errorOf(response)).message).toMatch(/No GPU worker "no-such-worker"/);
    }
  });
});

describe("admin reads", () => {
  it("keep Basic auth for the status page and its data", async () => {
    const page = await admin("/admin/status", { headers: { authorization: basic } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    const data = await admin("/admin/status.json", {
      headers: { authorization: basic, "sec-fetch-site": "same-origin" },
    });
    expect(data.status).toBe(200);
    expect(await admin("/admin/status")).toHaveProperty("status", 401);
  });

  it("refuse cross-site reads, except a top-level navigation to the page", async () => {
    const crossSite = { authorization: basic, "sec-fetch-site": "cross-site" };
    expect((await admin("/admin/status.json", { headers: crossSite })).status).toBe(403);
    expect((await admin("/admin/metrics", { headers: crossSite })).status).toBe(403);
    const navigation = { ...crossSite, "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" };
    expect((await admin("/admin/status", { headers: navigation })).status).toBe(200);
    expect((await admin("/admin/status.json", { headers: navigation })).status).toBe(403);
  });
});

describe("a dev-mode edge (FRONTIER_DEV=1) serves loopback clients only", () => {
  it("refuses a request from a non-loopback client address with a 403 naming the setting", async () => {
    const response = await exports.default.fetch(
      new Request(`${EDGE}/v1/models`, {
        headers: { "x-api-key": "sk-frontier-local", "cf-connecting-ip": "203.0.113.7" },
      }),
    );
    expect(response.status).toBe(403);
    expect((await errorOf(response)).message).toMatch(/FRONTIER_DEV=1 .*loopback clients only/);
  });

  it("serves loopback clients", async () => {
    for (const ip of ["127.0.0.1", "::1"]) {
      const response = await exports.default.fetch(
        new Request(`${EDGE}/v1/models`, { headers: { "x-api-key": "sk-frontier-local", "cf-connecting-ip": ip } }),
      );
      expect(response.status, ip).toBe(200);
    }
  });
});
