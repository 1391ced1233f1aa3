import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { freePort } from "../../../scripts/stack/processes.ts";

const [ephemeralLow] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);

const listening: Server[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(listening.splice(0).map((s) => new Promise((r) => s.close(r))));
});

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      listening.push(server);
      resolve(server);
    });
  });
}

describe("freePort (the stack's children listen on it seconds after it is chosen)", () => {
  it("chooses below the kernel's ephemeral range, where no listen(0) or outgoing connection can take it meanwhile", async () => {
    for (let i = 0; i < 20; i++) {
      const port = await freePort();
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(ephemeralLow ?? 0);
    }
  });

  it("never hands the same port out twice, and each one can be listened on", async () => {
    const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) await listen(port);
  });

  it("gives concurrent callers different ports even when both draw the same one", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.123);
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    expect(new Set(ports).size).toBe(3);
  });
});
