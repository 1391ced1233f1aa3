/**
 * `npx tsx scripts/import-graph.ts [--max-floors N] [DIR…]`: the shape of the source import graph,
 * from dependency-cruiser's JSON (tests and generated code excluded): files, import edges, the
 * longest import chain between files (levels), the longest chain between floors (floors: each
 * top-level folder of DIR is one node, as dependency-cruiser's `--collapse "^DIR/[^/]+/"` draws it,
 * and each file directly in DIR its own), cycles, and the most files any folder holds flat.
 * `npm run check` enforces the layer rules (.dependency-cruiser.cjs) and, through `--max-floors`,
 * the edge's depth: it exits 1 when a DIR's floors exceed N.
 */
import { execFileSync } from "node:child_process";
import { dirname } from "node:path";

interface Module {
  source: string;
  dependencies: { resolved: string; coreModule: boolean; couldNotResolve: boolean }[];
}

const args = process.argv.slice(2);
const maxAt = args.indexOf("--max-floors");
const maxFloors = maxAt >= 0 ? Number(args.splice(maxAt, 2)[1]) : undefined;
if (maxFloors !== undefined && !Number.isInteger(maxFloors)) throw new Error("--max-floors takes a whole number");
let tooDeep = false;
for (const dir of args.length > 0 ? args : ["edge", "gpu-worker"]) {
  const floors = report(dir);
  if (maxFloors !== undefined && floors > maxFloors) {
    process.stderr.write(`${dir}: ${floors} floors, more than the ${maxFloors} allowed (docs/architecture.md)\n`);
    tooDeep = true;
  }
}
if (tooDeep) process.exit(1);

/** Prints the graph's shape; returns its floors. */
function report(dir: string): number {
  const json = execFileSync(
    "npx",
    [
      "depcruise",
      dir,
      "--no-config",
      "--ts-pre-compilation-deps",
      "--output-type",
      "json",
      "--exclude",
      "node_modules|proto/gen|\\.d\\.ts$",
    ],
    { encoding: "utf8", maxBuffer: 64 << 20 },
  );
  const modules = (JSON.parse(json) as { modules: Module[] }).modules.filter((m) => m.source.startsWith(`${dir}/`));
  const inside = new Set(modules.map((m) => m.source));
  const edges = new Map<string, string[]>();
  for (const m of modules)
    edges.set(
      m.source,
      m.dependencies.filter((d) => inside.has(d.resolved)).map((d) => d.resolved),
    );
  const cycles = findCycles(edges);
  const depth = new Map<string, number>();
  const level = (file: string, stack: Set<string>): number => {
    const known = depth.get(file);
    if (known !== undefined) return known;
    if (stack.has(file)) return 0; // a cycle: counted in `cycles`, not here
    stack.add(file);
    let deepest = 0;
    for (const next of edges.get(file) ?? []) deepest = Math.max(deepest, 1 + level(next, stack));
    stack.delete(file);
    depth.set(file, deepest);
    return deepest;
  };
  let levels = 0;
  for (const file of inside) levels = Math.max(levels, 1 + level(file, new Set()));
  const perFolder = new Map<string, number>();
  for (const file of inside) perFolder.set(dirname(file), (perFolder.get(dirname(file)) ?? 0) + 1);
  const [widest, flat] = [...perFolder].sort((a, b) => b[1] - a[1])[0] ?? ["", 0];
  const edgeCount = [...edges.values()].reduce((n, list) => n + list.length, 0);
  const floors = longestFloorChain(dir, edges);
  process.stdout.write(
    `${dir}: ${inside.size} files in ${perFolder.size} folders, ${edgeCount} import edges, ${levels} levels, ` +
      `${floors.length} floors (${floors.join(" → ")}), ` +
      `${cycles.length} files on import cycles, widest folder ${widest} (${flat} files flat)\n`,
  );
  if (cycles.length > 0) process.stdout.write(`  on cycles: ${cycles.join(", ")}\n`);
  return floors.length;
}

/** The longest import chain between floors (a top-level folder of `dir`, or a file directly in it). */
function longestFloorChain(dir: string, edges: Map<string, string[]>): string[] {
  const floorOf = (file: string): string => file.slice(dir.length + 1).split("/")[0] ?? file;
  const floorEdges = new Map<string, Set<string>>();
  for (const [from, list] of edges) {
    const a = floorOf(from);
    const out = floorEdges.get(a) ?? new Set<string>();
    floorEdges.set(a, out);
    for (const to of list) if (floorOf(to) !== a) out.add(floorOf(to));
  }
  const chain = new Map<string, string[]>();
  const longest = (floor: string, stack: Set<string>): string[] => {
    const known = chain.get(floor);
    if (known) return known;
    if (stack.has(floor)) return []; // floors on a cycle: the layer rules refuse it
    stack.add(floor);
    let best: string[] = [floor];
    for (const next of floorEdges.get(floor) ?? []) {
      const rest = longest(next, stack);
      if (rest.length + 1 > best.length) best = [floor, ...rest];
    }
    stack.delete(floor);
    chain.set(floor, best);
    return best;
  };
  let best: string[] = [];
  for (const floor of floorEdges.keys()) {
    const candidate = longest(floor, new Set());
    if (candidate.length > best.length) best = candidate;
  }
  return best;
}

/** Files that lie on some cycle (strongly connected components of more than one file). */
function findCycles(edges: Map<string, string[]>): string[] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[] = [];
  const visit = (v: string): void => {
    order.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!order.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, order.get(w)!));
    }
    if (low.get(v) === order.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(...component.sort());
    }
  };
  for (const v of edges.keys()) if (!order.has(v)) visit(v);
  return out;
}
