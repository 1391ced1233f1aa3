/**
 * Generate a random test model: `tsx native/model/cli.ts --size tiny|mid [--out path] [--seed n]`.
 * Without --out it writes (once) the cached model used by tests and prints its path.
 */
import { parseArgs } from "node:util";
import { validateGguf } from "./gguf-validate.ts";
import { ensureTestModel, TEST_MODEL_SPECS, type TestModelSize, writeTestModel } from "./gguf-writer.ts";

const { values } = parseArgs({
  options: { size: { type: "string", default: "tiny" }, out: { type: "string" }, seed: { type: "string" } },
});
const size = values.size ?? "tiny";
if (!Object.hasOwn(TEST_MODEL_SPECS, size)) {
  console.error(`--size must be one of: ${Object.keys(TEST_MODEL_SPECS).join(", ")}`);
  process.exit(2);
}
const seed = values.seed === undefined ? undefined : Number(values.seed);
if (seed !== undefined && !Number.isSafeInteger(seed)) {
  console.error("--seed must be an integer");
  process.exit(2);
}
let path: string;
if (values.out === undefined && seed === undefined) {
  path = await ensureTestModel(size as TestModelSize);
} else {
  path = values.out ?? `frontier-${size}-seed${seed}.gguf`;
  await writeTestModel(path, size as TestModelSize, seed);
}
await validateGguf(path);
console.log(path);
