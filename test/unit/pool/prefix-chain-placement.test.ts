/**
 * Issue 45 item 2: placement by the longest shared prompt prefix. The text-side chain the edge
 * computes (shared/prefix-chain.ts) against what workers advertise (gpu-worker/pool/prefix-advert.ts):
 * a new conversation goes to the worker holding the deepest entry of its chain while that worker
 * has room; other regions only for a much longer prefix.
 */
import { describe, expect, it } from "vitest";
import { notePlacement, type PoolWorker, placeSession } from "../../../edge/pool/placement.ts";
import { regionOrder } from "../../../edge/pool/region-order.ts";
import { advertisedDepths, PREFIX_CHUNK_CHARS, prefixChain } from "../../../shared/prefix-chain.ts";

function worker(url: string, extra: Partial<PoolWorker> = {}): PoolWorker {
  return {
    id: url,
    url,
    region: "local",
    state: "up",
    static: false,
    modelIdentity: "m",
    sequencesTotal: 4,
    sequencesFree: 4,
    queueDepth: 0,
    activeRequests: 0,
    residentSessions: 0,
    pending: 0,
    prefixes: [],
    lastHeartbeat: 1,
    ...extra,
  };
}

const SYSTEM = ["You are an agent."];
const CONTEXT = "project instructions and environment reminders. ".repeat(200); // ~9.8k characters

function conversation(text: string, system = SYSTEM) {
  return {
    system,
    tools: [{ name: "Bash", description: "Run a command.", inputSchemaJson: '{"type":"object"}' }],
    messages: [{ role: 1, content: [{ block: { case: "text" as const, value: { text } } }] }],
  };
}

/** What a worker holding `chain` advertises. */
function advertised(chain: readonly string[]): string[] {
  return advertisedDepths(chain.length).map((d) => chain[d] ?? "");
}

describe("the prefix chain", () => {
  it("shares every chunk before the first differing character, per tenant, starting with the fingerprint", async () => {
    const a = await prefixChain("t1", conversation(`${CONTEXT}Task: fix the tests.`));
    const b = await prefixChain("t1", conversation(`${CONTEXT}Task: write the docs.`));
    const shared = Math.floor(CONTEXT.length / PREFIX_CHUNK_CHARS);
    expect(a.length).toBeGreaterThan(shared);
    expect(a.slice(0, shared + 1)).toEqual(b.slice(0, shared + 1));
    expect(a.every((h) => /^[0-9a-f]{32}$/.test(h))).toBe(true);
    // Another tenant's identical text shares nothing; another system prompt shares nothing.
    const other = await prefixChain("t2", conversation(`${CONTEXT}Task: fix the tests.`));
    expect(other.some((h) => a.includes(h))).toBe(false);
    const otherSystem = await prefixChain("t1", conversation(`${CONTEXT}Task: fix the tests.`, ["Other."]));
    expect(otherSystem.some((h) => a.includes(h))).toBe(false);
  });

  it("advertises a bounded set of depths of any chain: 0, 1, 2, 4, … and the last", () => {
    expect(advertisedDepths(0)).toEqual([]);
    expect(advertisedDepths(1)).toEqual([0]);
    expect(advertisedDepths(10)).toEqual([0, 1, 2, 4, 8, 9]);
    expect(advertisedDepths(257)).toEqual([0, 1, 2, 4, 8, 16, 32, 64, 128, 256]);
  });
});

describe("placement by the longest prefix", () => {
  it("goes to the worker holding the longest prefix of the first message, though busier, while it has room", async () => {
    const held = await prefixChain("t1", conversation(`${CONTEXT}Task: fix the tests.`));
    const request = await prefixChain("t1", conversation(`${CONTEXT}Task: write the docs.`));
    const other = await prefixChain("t1", conversation("a different first message"));
    // b holds only system + tools (another conversation of the tenant) and is less loaded; a holds
    // the first message's context too. By the fingerprint alone b would win (the least loaded holder).
    const workers = [
      worker("a", { residentSessions: 4, sequencesTotal: 4, prefixes: advertised(held) }),
      worker("b", { residentSessions: 2, prefixes: advertised(other) }),
    ];
    expect(placeSession(workers, { prefix: request[0] })).toMatchObject({ worker: { url: "b" }, reason: "prefix" });
    const placed = placeSession(workers, { prefix: request[0], chain: request });
    expect(placed).toMatchObject({ worker: { url: "a" }, reason: "prefix", prefixKnown: true });
    expect(placed?.depth).toBeGreaterThanOrEqual(4);
    // The load rule still holds: beyond the margin, or running a turn on every sequence, it does not get it.
    workers[0]!.residentSessions = 8;
    expect(placeSession(workers, { prefix: request[0], chain: request })?.worker.url).toBe("b");
    workers[0]!.residentSessions = 4;
    workers[0]!.activeRequests = 4;
    expect(placeSession(workers, { prefix: request[0], chain: request })?.worker.url).toBe("b");
  });

  it("records a placement's chain on its worker until the heartbeat, so a burst finds the holder", async () => {
    const first = await prefixChain("t1", conversation(`${CONTEXT}agent 1`));
    const second = await prefixChain("t1", conversation(`${CONTEXT}agent 2`));
    const workers = [worker("a"), worker("b")];
    const placed = placeSession(workers, { prefix: first[0], chain: first });
    expect(placed?.reason).toBe("load");
    notePlacement(placed!.worker, first[0], first, 1);
    expect(placeSession(workers, { prefix: second[0], chain: second })).toMatchObject({
      worker: { url: placed!.worker.url },
      reason: "prefix",
    });
  });

  it("asks another region first only when its worker holds a much longer prefix and has room", async () => {
    const chain = await prefixChain("t1", conversation("x".repeat(80 * PREFIX_CHUNK_CHARS)));
    const regions = [
      { name: "home", locationHint: undefined, workers: [] },
      { name: "far", locationHint: undefined, workers: [] },
    ];
    const config = { regions, homeRegion: "home", remotePrefixChars: 32 * PREFIX_CHUNK_CHARS };
    const home = worker("h", { region: "home", prefixes: advertised(chain.slice(0, 9)) }); // depth 8
    const far = worker("f", { region: "far", prefixes: advertised(chain) }); // depth 80
    expect(regionOrder([home, far], config, chain).map((r) => r.name)).toEqual(["far", "home"]);
    // 32 chunks more is the threshold; less stays home.
    const near = worker("f", { region: "far", prefixes: advertised(chain.slice(0, 40)) }); // depth 39
    expect(regionOrder([home, near], config, chain).map((r) => r.name)).toEqual(["home", "far"]);
    // A far holder with no room, or no chain at all: home first.
    expect(regionOrder([home, { ...far, activeRequests: 4 }], config, chain)[0]?.name).toBe("home");
    expect(regionOrder([home, far], config, [])[0]?.name).toBe("home");
  });
});
