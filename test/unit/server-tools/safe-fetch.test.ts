/** web_fetch's SSRF policy: refused address ranges, redirects, resolution, limits — against local servers. */
import type { LookupAddress } from "node:dns";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAddress } from "../../../gpu-worker/server-tools/address-policy.ts";
import { type FetchPolicy, safeFetch } from "../../../gpu-worker/server-tools/safe-fetch.ts";
import { FAKE_PAGE_TEXT, type FakeWeb, startFakeWeb } from "../../support/fake-web.ts";

const policy = (overrides: Partial<FetchPolicy> = {}): FetchPolicy => ({
  allowLoopback: true,
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

  it.each(["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"])("allows %s", (address) => {
    expect(checkAddress(address, false)).toEqual({ allowed: true });
  });

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
    const literal = await safeFetch(`${web.url}/page.html`, policy({ allowLoopback: false }));
    expect(literal).toMatchObject({ ok: false, error: "url_not_allowed" });
    const port = new URL(web.url).port;
    const named = await safeFetch(`http://localhost:${port}/page.html`, policy({ allowLoopback: false }));
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
