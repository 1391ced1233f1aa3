/**
 * Prefetched admissions (edge/tenancy/tenant-admission.ts, TenantLimiterDO.pass/claim): a finished
 * request hands its slot to the tenant's next request through the isolate, which then waits for no
 * limiter; the limits stay strict (a prefetched admission holds its slot and rate token), and an
 * unclaimed one gives its token back.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import type { Env } from "../../edge/env.ts";
import edge from "../../edge/index.ts";
import { dropPrefetchedAdmission } from "../../edge/tenancy/tenant-admission.ts";
import { StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { event, type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { LOCAL_KEY, messagesBody } from "./helpers.ts";

let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

/** The test env with every TenantLimiterDO call logged when issued, and "generate" when the worker is called. */
function loggingEnv(steps: string[]): Env {
  return new Proxy(env, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (prop !== "TENANTS") return value;
      const ns = value as DurableObjectNamespace;
      return {
        getByName: (name: string) => {
          const stub = ns.getByName(name) as unknown as Record<string, (...a: unknown[]) => unknown>;
          return new Proxy(stub, {
            get(s, method) {
              if (typeof method !== "string" || method === "then") return s[method as string];
              return (...args: unknown[]) => {
                steps.push(`TENANTS.${method}`);
                return s[method]?.(...args);
              };
            },
          });
        },
      };
    },
  });
}

async function turn(steps: string[]): Promise<number> {
  const ctx = createExecutionContext();
  const request = new Request("http://edge.test/v1/messages", {
    method: "POST",
    headers: { "x-api-key": LOCAL_KEY, "content-type": "application/json" },
    body: JSON.stringify({ ...messagesBody(), stream: true }),
  });
  const response = await edge.fetch(request as Parameters<typeof edge.fetch>[0], loggingEnv(steps), ctx);
  const text = await response.text();
  if (response.status !== 200) console.error(text);
  await waitOnExecutionContext(ctx);
  return response.status;
}

describe("prefetched admissions", () => {
  it("the tenant's next request waits for no limiter: the finished one handed its slot on", async () => {
    dropPrefetchedAdmission("local");
    fake = installFakeWorker(function* () {
      yield event({ case: "prompt", value: { promptTokens: 5, messageId: "msg_p" } });
      yield event({ case: "stop", value: { reason: StopReason.END_TURN } });
    });
    const first: string[] = [];
    expect(await turn(first)).toBe(200);
    expect(first).toEqual(["TENANTS.acquire", "TENANTS.pass"]);
    const next: string[] = [];
    fake.restore();
    fake = installFakeWorker(function* () {
      next.push("generate");
      yield event({ case: "prompt", value: { promptTokens: 5, messageId: "msg_p" } });
      yield event({ case: "stop", value: { reason: StopReason.END_TURN } });
    });
    expect(await turn(next)).toBe(200);
    // No acquire: the claim goes out alongside, the slot is handed on after the response.
    expect(next).toEqual(["TENANTS.claim", "generate", "TENANTS.pass"]);
  });

  it("counts a prefetched admission against the limits and gives an unclaimed one's rate token back", async () => {
    const stub = env.TENANTS.getByName(`tenant-${crypto.randomUUID()}`);
    const limits = { concurrent: 2, perMinute: 3 };
    expect(await stub.acquire("r1", limits)).toEqual({ ok: true });
    expect(await stub.pass("r1", "r1.next", limits)).toEqual({ ok: true }); // a slot and a token for the next
    expect(await stub.acquire("r2", limits)).toEqual({ ok: true });
    // Two slots held (r1.next, r2): a third request is refused; with r2 gone, the rate (3 tokens spent) refuses it.
    expect(await stub.acquire("r3", limits)).toMatchObject({ ok: false, reason: "concurrency" });
    await stub.release("r2");
    expect(await stub.acquire("r3", limits)).toMatchObject({ ok: false, reason: "rate" });
    // The prefetch is released unclaimed: its slot and its token come back.
    await stub.release("r1.next", limits);
    expect(await stub.acquire("r4", limits)).toEqual({ ok: true });
    // No token left for a next one: nothing is prefetched, and there is nothing to claim.
    expect(await stub.pass("r4", "r4.next", limits)).toMatchObject({ ok: false, reason: "rate" });
    expect(await stub.claim("r4.next")).toBe(false);
  });
});
