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

/** A rule per layer: nothing in it imports a later layer (or edge/'s top-level files). */
function layerRules(root, layers, top) {
  return layers.map((layer, i) => {
    const later = layers.slice(i + 1);
    const targets = [...later.map((l) => `^${root}/${l}/`), ...(top ? [`^${root}/[^/]+\\.ts$`] : [])];
    return {
      name: `${root}-${layer}-no-upward`,
      comment: `${root}/${layer}/ may import only ${layers.slice(0, i + 1).join(", ")} (layers run ${layers.join(" < ")})`,
      severity: "error",
      from: { path: `^${root}/${layer}/` },
      to: { path: targets.join("|") },
    };
  });
}

/** The protocol adapters do not know each other; OpenAI's shared pieces (errors, response_format) are the exception. */
const PROTOCOL_RULES = [
  ["messages", "responses|chat|openai"],
  ["responses", "messages|chat"],
  ["chat", "messages|responses"],
  ["openai", "messages|responses|chat"],
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
    ...layerRules("edge", EDGE_LAYERS, true),
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
