/** web_fetch's SSRF policy: refused address ranges, redirects, resolution, limits — against local servers. */
import type { LookupAddress } from "node:dns";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAddress } from "../../../gpu-worker/server-tools/address-policy.ts";
import { loadServerToolsConfig } from "../../../gpu-worker/server-tools/config.ts";
import { type FetchPolicy, refuseHop, safeFetch } from "../../../gpu-worker/server-tools/safe-fetch.ts";
import { FAKE_PAGE_TEXT, type FakeWeb, startFakeWeb } from "../../support/fake-web.ts";

const policy = (overrides: Partial<FetchPolicy> = {}): FetchPolicy => ({
  allowLoopback: true,
  ports: [80, 443],
  maxBytes: 1_000_000,
  timeoutMs: 5_000,
  maxRedirects: 3,
  ...overrides,
});

describe("address policy", () => {
  it.each([
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "cgnat"],
    ["169.254.169.254", "link-local"],
    ["127.0.0.1", "loopback"],
    ["0.0.0.0", "this-network"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fd00::1", "unique-local"],
    ["fc12:3456::1", "unique-local"],
    ["fe80::1", "link-local"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:a9fe:a9fe", "link-local"],
    ["64:ff9b::192.168.0.1", "private"],
    ["2002:0a00:0001::1", "private"],
    ["ff02::1", "multicast"],
  ])("refuses %s (%s)", (address, reason) => {
    expect(checkAddress(address, false)).toEqual({ allowed: false, reason });
  });

  it.each(["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700::1111"])("allows %s", (address) => {
    expect(checkAddress(address, false)).toEqual({ allowed: true });
  });

  // Every range of the IANA IPv4 / IPv6 Special-Purpose Address Registries, and the IPv6 forms that
  // carry an IPv4 address (refused as a whole; the reason names the embedded range when special).
  it.each([
    ["0.1.2.3", "this-network"],
    ["100.127.255.255", "cgnat"],
    ["192.0.0.9", "reserved"],
    ["192.0.0.170", "reserved"],
    ["192.0.2.1", "documentation"],
    ["192.31.196.1", "as112"],
    ["192.52.193.1", "amt"],
    ["192.88.99.2", "reserved"],
    ["192.175.48.1", "as112"],
    ["198.18.0.1", "benchmarking"],
    ["198.19.255.255", "benchmarking"],
    ["198.51.100.1", "documentation"],
    ["203.0.113.1", "documentation"],
    ["239.255.255.250", "multicast"],
    ["240.0.0.1", "reserved"],
    ["::ffff:8.8.8.8", "ipv4-mapped"],
    ["::ffff:0:0", "this-network"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:0:7f00:1", "loopback"],
    ["::ffff:0:808:808", "ipv4-translated"],
    ["::8.8.8.8", "ipv4-compatible"],
    ["::127.0.0.1", "loopback"],
    ["64:ff9b::808:808", "nat64"],
    ["64:ff9b::7f00:1", "loopback"],
    ["64:ff9b:1::1", "nat64-local"],
    ["64:ff9b:1:ffff::808:808", "nat64-local"],
    ["100::1", "discard-only"],
    ["100:0:0:1::1", "dummy-prefix"],
    ["2001::1", "ietf-protocol"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "ietf-protocol"],
    ["2001:1::1", "ietf-protocol"],
    ["2001:2::1", "ietf-protocol"],
    ["2001:3::1", "ietf-protocol"],
    ["2001:4:112::1", "ietf-protocol"],
    ["2001:20::1", "ietf-protocol"],
    ["2001:1ff:ffff::1", "ietf-protocol"],
    ["2001:db8:1::1", "documentation"],
    ["2002:808:808::1", "6to4"],
    ["2620:4f:8000::53", "as112"],
    ["3fff::1", "documentation"],
    ["3fff:fff::1", "documentation"],
    ["5f00::1", "srv6-sid"],
    ["fec0::1", "site-local"],
    ["fe80::1%eth0", "link-local"],
    ["4000::1", "reserved"],
    ["::2", "this-network"],
  ])("refuses %s (%s), also with loopback allowed", (address, reason) => {
    expect(checkAddress(address, false)).toEqual({ allowed: false, reason });
    expect(checkAddress(address, true)).toEqual({ allowed: false, reason });
  });

  it.each(["2001:200::1", "198.20.0.1", "100.128.0.1", "192.0.3.1", "3fff:1000::1", "2620:4f:8001::1", "2a00:1450::1"])(
    "allows %s, just outside a special range",
    (address) => {
      expect(checkAddress(address, false)).toEqual({ allowed: true });
    },
  );

  it("allows loopback only when configured, and nothing else with it", () => {
    expect(checkAddress("127.0.0.1", true).allowed).toBe(true);
    expect(checkAddress("::1", true).allowed).toBe(true);
    expect(checkAddress("10.0.0.1", true).allowed).toBe(false);
    expect(checkAddress("169.254.169.254", true).allowed).toBe(false);
  });
});

describe("safeFetch", () => {
  let web: FakeWeb;
  beforeAll(async () => {
    web = await startFakeWeb();
  });
  afterAll(() => web.close());

  it("fetches a local page when loopback is allowed, following a same-site redirect", async () => {
    const outcome = await safeFetch(`${web.url}/to-page`, policy());
    expect(outcome.ok).toBe(true);
    if (outcome.ok) {
      expect(outcome.url).toBe(`${web.url}/page.html`);
      expect(outcome.body).toContain(FAKE_PAGE_TEXT);
    }
  });

  it("refuses loopback by default: an IP literal and a hostname that resolves to it", async () => {
    const port = new URL(web.url).port;
    // The fake web's port is allowed here: what refuses is the address.
    const strict = policy({ allowLoopback: false, ports: [Number(port)] });
    const literal = await safeFetch(`${web.url}/page.html`, strict);
    expect(literal).toMatchObject({ ok: false, error: "url_not_allowed" });
    const named = await safeFetch(`http://localhost:${port}/page.html`, strict);
    expect(named).toMatchObject({ ok: false, error: "url_not_allowed" });
    if (!named.ok) expect(named.detail).toMatch(/localhost resolves to .*loopback/);
  });

  it("refuses private and metadata addresses, before connecting and after a redirect", async () => {
    for (const url of [
      "http://10.0.0.1/",
      "http://169.254.169.254/latest/meta-data/",
      "http://[fd00::1]/",
      "http://[::ffff:192.168.0.1]/",
    ]) {
      expect(await safeFetch(url, policy())).toMatchObject({ ok: false, error: "url_not_allowed" });
    }
    for (const path of ["/to-private", "/to-metadata"]) {
      const outcome = await safeFetch(`${web.url}${path}`, policy());
      expect(outcome).toMatchObject({ ok: false, error: "url_not_allowed" });
    }
  });

  it("resolves each host once and connects to the address it checked (no second lookup to rebind)", async () => {
    const port = new URL(web.url).port;
    const asked: string[] = [];
    const resolve = async (host: string): Promise<LookupAddress[]> => {
      asked.push(host);
      return [{ address: "127.0.0.1", family: 4 }];
    };
    // rebind.invalid exists nowhere: the page can only load from the checked address.
    const outcome = await safeFetch(`http://rebind.invalid:${port}/page.html`, policy({ resolve }));
    expect(outcome.ok).toBe(true);
    expect(asked).toEqual(["rebind.invalid"]);
    // A name whose answer includes a private address is refused outright.
    const mixed = async (): Promise<LookupAddress[]> => [
      { address: "93.184.216.34", family: 4 },
      { address: "127.0.0.1", family: 4 },
    ];
    const refused = await safeFetch(`http://rebind.invalid:${port}/`, policy({ resolve: mixed, allowLoopback: false }));
    expect(refused).toMatchObject({ ok: false, error: "url_not_allowed" });
  });

  it("refuses special addresses written in any form a URL allows", async () => {
    for (const url of [
      "http://[::ffff:0:7f00:1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://[64:ff9b::a00:1]/",
      "http://[64:ff9b:1::1]/",
      "http://[2001::1]/",
      "http://[100::1]/",
      "http://0x7f.1/",
      "http://2130706433/",
      "http://0177.0.0.1/",
      "http://[::]/",
    ]) {
      const outcome = await safeFetch(url, policy({ allowLoopback: false }));
      expect(outcome, url).toMatchObject({ ok: false, error: "url_not_allowed" });
      if (!outcome.ok) expect(outcome.detail, url).toMatch(/^address /);
    }
    // Allowed loopback means 127.0.0.0/8 and ::1 as such, not an IPv4-carrying IPv6 form of them.
    expect(await safeFetch("http://[::ffff:127.0.0.1]/", policy())).toMatchObject({ ok: false });
  });

  it("connects only to the configured ports (80 and 443 by default), before resolving", async () => {
    const asked: string[] = [];
    const resolve = async (host: string): Promise<LookupAddress[]> => {
      asked.push(host);
      return [{ address: "93.184.216.34", family: 4 }];
    };
    const strict = policy({ allowLoopback: false, resolve });
    for (const url of ["http://example.test:8080/", "https://example.test:22/", "http://93.184.216.34:6379/"]) {
      const outcome = await safeFetch(url, strict);
      expect(outcome, url).toMatchObject({ ok: false, error: "url_not_allowed" });
      if (!outcome.ok) expect(outcome.detail).toMatch(/^port \d+ is not fetched$/);
    }
    expect(asked).toEqual([]);
    // With loopback allowed (tests), other ports are for loopback only: a public address is refused.
    const outcome = await safeFetch("http://public.test:8080/", policy({ resolve }));
    expect(outcome).toMatchObject({ ok: false, error: "url_not_allowed" });
    if (!outcome.ok) expect(outcome.detail).toMatch(/public.test resolves to port 8080 is not fetched/);
  });

  it("reads the ports from FRONTIER_FETCH_PORTS (80 and 443 unless set)", () => {
    const ports = (value?: string) =>
      loadServerToolsConfig({ FRONTIER_WEB_FETCH: "on", FRONTIER_FETCH_PORTS: value }).fetch?.ports;
    expect(ports()).toEqual([80, 443]);
    expect(ports("443, 8443")).toEqual([443, 8443]);
    expect(() => ports("80,http")).toThrow(/FRONTIER_FETCH_PORTS/);
    expect(() => ports("0")).toThrow(/FRONTIER_FETCH_PORTS/);
  });

  it("only fetches http(s), without credentials", async () => {
    for (const url of ["file:///etc/passwd", "ftp://example.org/", "gopher://127.0.0.1:70/", "not a url"]) {
      expect(await safeFetch(url, policy())).toMatchObject({ ok: false, error: "url_not_allowed" });
    }
    expect(await safeFetch(`http://user:pw@${new URL(web.url).host}/page.html`, policy())).toMatchObject({
      ok: false,
      error: "url_not_allowed",
    });
  });

  it("caps the body, the redirects and the content type", async () => {
    const big = await safeFetch(`${web.url}/big.txt`, policy({ maxBytes: 1000 }));
    expect(big.ok && big.body.length === 1000 && big.truncated).toBe(true);
    expect(await safeFetch(`${web.url}/to-page`, policy({ maxRedirects: 0 }))).toMatchObject({
      ok: false,
      error: "url_not_accessible",
    });
    expect(await safeFetch(`${web.url}/binary`, policy())).toMatchObject({
      ok: false,
      error: "unsupported_content_type",
    });
    expect(await safeFetch(`${web.url}/missing`, policy())).toMatchObject({ ok: false, error: "url_not_accessible" });
  });
});

describe("redirects", () => {
  let server: Server;
  let port = 0;
  /** Every *.test name is this machine: each hop is judged by its URL, not by where it lands. */
  const resolve = async (): Promise<LookupAddress[]> => [{ address: "127.0.0.1", family: 4 }];
  const at = (host: string, path = "/page") => `http://${host}:${port}${path}`;
  const via = (from: string, to: string) => at(from, `/to?u=${encodeURIComponent(to)}`);
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      const target = url.searchParams.get("u");
      if (url.pathname === "/to" && target !== null) res.writeHead(302, { location: target }).end();
      else res.writeHead(200, { "content-type": "text/plain" }).end(`page at ${req.headers.host}`);
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  it("follows a redirect that stays inside the allowed domains", async () => {
    const domains = { allowedDomains: ["allowed.test"], blockedDomains: [] };
    const outcome = await safeFetch(via("allowed.test", at("docs.allowed.test")), policy({ resolve }), { domains });
    expect(outcome).toMatchObject({ ok: true, body: `page at docs.allowed.test:${port}` });
  });

  it("refuses a redirect that leaves the allowed domains or lands on a blocked one", async () => {
    const allowed = { allowedDomains: ["allowed.test"], blockedDomains: [] };
    const left = await safeFetch(via("allowed.test", at("elsewhere.test")), policy({ resolve }), { domains: allowed });
    expect(left).toMatchObject({ ok: false, error: "url_not_allowed" });
    if (!left.ok) expect(left.detail).toBe("redirect to elsewhere.test is outside the allowed domains");
    const blocked = { allowedDomains: [], blockedDomains: ["blocked.test"] };
    const twice = via("open.test", via("fine.test", at("www.blocked.test")));
    const landed = await safeFetch(twice, policy({ resolve }), { domains: blocked });
    expect(landed).toMatchObject({ ok: false, error: "url_not_allowed" });
    // Without the call's domains the same chain is fetched: the refusal above is the domain rule.
    expect(await safeFetch(twice, policy({ resolve }))).toMatchObject({ ok: true });
  });

  it("re-checks scheme and credentials on every hop", async () => {
    for (const target of ["file:///etc/passwd", "gopher://open.test/", `http://user:pw@open.test:${port}/page`]) {
      const outcome = await safeFetch(via("open.test", target), policy({ resolve }));
      expect(outcome, target).toMatchObject({ ok: false, error: "url_not_allowed" });
    }
  });

  it("never follows https to http, re-checks the port, and allows the other way", () => {
    const strict = policy({ allowLoopback: false });
    const hop = (to: string, from: string) => refuseHop(new URL(to), new URL(from), strict, undefined);
    expect(hop("http://example.org/", "https://example.org/")).toBe("redirect from https to http");
    expect(hop("http://example.org:443/", "https://example.org/")).toBe("redirect from https to http");
    expect(hop("https://example.org/", "http://example.org/")).toBeUndefined();
    expect(hop("https://example.org/b", "https://example.org/a")).toBeUndefined();
    expect(hop("https://example.org:8443/", "https://example.org/")).toBe("port 8443 is not fetched");
    expect(hop("https://10.0.0.1/", "https://example.org/")).toBe("address 10.0.0.1 (private)");
    const domains = { allowedDomains: ["example.org"], blockedDomains: ["private.example.org"] };
    expect(refuseHop(new URL("https://private.example.org/"), new URL("https://example.org/"), strict, domains)).toBe(
      "redirect to private.example.org is outside the allowed domains",
    );
  });
});
