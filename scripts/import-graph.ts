/**
 * `npx tsx scripts/import-graph.ts [DIR…]`: the shape of the source import graph, from
 * dependency-cruiser's JSON (tests and generated code excluded): files, import edges, the longest
 * import chain (levels), cycles, and the most files any folder holds flat. `npm run check` enforces
 * the rules (.dependency-cruiser.cjs); this prints the numbers a review or a closing note quotes.
 */
import { execFileSync } from "node:child_process";
import { dirname } from "node:path";

interface Module {
  source: string;
  dependencies: { resolved: string; coreModule: boolean; couldNotResolve: boolean }[];
}

const dirs = process.argv.slice(2);
for (const dir of dirs.length > 0 ? dirs : ["edge", "gpu-worker"]) report(dir);

function report(dir: string): void {
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
  process.stdout.write(
    `${dir}: ${inside.size} files in ${perFolder.size} folders, ${edgeCount} import edges, ${levels} levels, ` +
      `${cycles.length} files on import cycles, widest folder ${widest} (${flat} files flat)\n`,
  );
  if (cycles.length > 0) process.stdout.write(`  on cycles: ${cycles.join(", ")}\n`);
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
