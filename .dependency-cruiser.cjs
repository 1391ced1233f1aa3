/**
 * The shape of the house, enforced by `npm run check` (dependency-cruiser). Each list below runs from
 * the lowest layer to the highest: a file may import its own layer and the ones before it, never one
 * after it. Cycles are refused everywhere, type-only imports included. docs/architecture.md draws it.
 */

/** edge/: one folder per layer; `top` is edge/*.ts (index, router, env: the one place naming every DO). */
const EDGE_LAYERS = [
  "core",
  "config",
  "http",
  "worker",
  "metrics",
  "tenancy",
  "server-tools",
  "pool",
  "session",
  "turn",
  "protocols",
  "admin",
];

/**
 * gpu-worker/: folders, plus its root files placed where they sit (log and errors at the bottom, the
 * config above what it reads, main/service/server on top). The same order the folder READMEs give.
 */
const WORKER_LAYERS = [
  ["core", "^gpu-worker/(log|errors)\\.ts$"],
  ["chat", "^gpu-worker/chat/"],
  ["continuation", "^gpu-worker/continuation/"],
  ["checkpoints", "^gpu-worker/checkpoints/"],
  ["session", "^gpu-worker/session/"],
  ["server-tools", "^gpu-worker/server-tools/"],
  ["generate", "^gpu-worker/generate/"],
  ["config", "^gpu-worker/config\\.ts$"],
  ["metrics", "^gpu-worker/metrics/"],
  ["pool", "^gpu-worker/pool/"],
  ["turn", "^gpu-worker/turn/"],
  ["top", "^gpu-worker/(main|service|server)\\.ts$"],
];

/** A rule per layer ([name, path pattern], lowest first): nothing in it imports a later layer. */
function layerRules(root, layers) {
  return layers.slice(0, -1).map(([layer, pattern], i) => ({
    name: `${root}-${layer}-no-upward`,
    comment: `${layer} may import only ${layers
      .slice(0, i + 1)
      .map(([name]) => name)
      .join(", ")} (layers run ${layers.map(([name]) => name).join(" < ")})`,
    severity: "error",
    from: { path: pattern },
    to: {
      path: layers
        .slice(i + 1)
        .map(([, later]) => later)
        .join("|"),
    },
  }));
}

/** edge/'s layers as [name, pattern]: its folders, then its top-level files. */
const EDGE_LAYER_PATTERNS = [...EDGE_LAYERS.map((layer) => [layer, `^edge/${layer}/`]), ["top", "^edge/[^/]+\\.ts$"]];

/** The protocol adapters do not know each other; OpenAI's shared pieces (errors, response_format) are the exception. */
const PROTOCOL_RULES = [
  ["messages", "responses|chat|openai|gemini"],
  ["responses", "messages|chat|gemini"],
  ["chat", "messages|responses|gemini"],
  ["openai", "messages|responses|chat|gemini"],
  ["gemini", "messages|responses|chat|openai"],
].map(([from, to]) => ({
  name: `edge-protocols-${from}-alone`,
  severity: "error",
  from: { path: `^edge/protocols/${from}/` },
  to: { path: `^edge/protocols/(${to})/` },
}));

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import cycles, type-only ones included (declare a binding or a type where it is owned).",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "edge-not-worker",
      comment: "gRPC (proto/) is the only seam between the edge and the GPU worker.",
      severity: "error",
      from: { path: "^edge/" },
      to: { path: "^(gpu-worker|native)/" },
    },
    {
      name: "worker-not-edge",
      severity: "error",
      from: { path: "^(gpu-worker|native)/" },
      to: { path: "^edge/" },
    },
    {
      name: "shared-is-a-leaf",
      comment: "shared/ is used by both sides and imports neither.",
      severity: "error",
      from: { path: "^shared/" },
      to: { path: "^(edge|gpu-worker|native)/" },
    },
    {
      name: "native-is-the-engine-door",
      comment: "Only native/ imports node-llama-cpp; everything else sees its narrow interface.",
      severity: "error",
      from: { path: "^(edge|gpu-worker|shared)/" },
      to: { path: "node_modules/(node-llama-cpp|@node-llama-cpp)/" },
    },
    {
      name: "native-below-worker",
      severity: "error",
      from: { path: "^native/" },
      to: { path: "^gpu-worker/" },
    },
    ...layerRules("edge", EDGE_LAYER_PATTERNS),
    ...layerRules("gpu-worker", WORKER_LAYERS),
    ...PROTOCOL_RULES,
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^proto/gen/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
  },
};
