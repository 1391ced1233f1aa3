/**
 * Generate a random test model and print its path:
 *   `tsx native/model/cli.ts --size tiny|mid [--out path] [--seed n]`   byte-level vocabulary
 *   `tsx native/model/cli.ts --family qwen3 [--size tiny|mid] [--out path] [--seed n] [--measure]`   a family's
 *   real vocabulary; --measure also prints its size, load time and tokenization speed as JSON
 * Without --out/--seed it writes (once) the cached model used by tests.
 */
import { parseArgs } from "node:util";
import { FAMILY_NAMES, isFamilyName } from "./families.ts";
import { measureFamilyModel } from "./family-measure.ts";
import { ensureFamilyModel, type FamilyModelSize, writeFamilyModel } from "./family-model.ts";
import { validateGguf } from "./gguf-validate.ts";
import { ensureTestModel, TEST_MODEL_SPECS, type TestModelSize, writeTestModel } from "./gguf-writer.ts";

const { values } = parseArgs({
  options: {
    size: { type: "string", default: "tiny" },
    family: { type: "string" },
    out: { type: "string" },
    seed: { type: "string" },
    measure: { type: "boolean", default: false },
  },
});
const size = values.size ?? "tiny";
const family = values.family;
const fail = (message: string): never => {
  console.error(message);
  process.exit(2);
};
if (!Object.hasOwn(TEST_MODEL_SPECS, size)) fail(`--size must be one of: ${Object.keys(TEST_MODEL_SPECS).join(", ")}`);
if (family !== undefined && !isFamilyName(family)) fail(`--family must be one of: ${FAMILY_NAMES.join(", ")}`);
if (family !== undefined && size !== "tiny" && size !== "mid") fail("a family model is tiny or mid");
const seed = values.seed === undefined ? undefined : Number(values.seed);
if (seed !== undefined && !Number.isSafeInteger(seed)) fail("--seed must be an integer");

let path: string;
const cached = values.out === undefined && seed === undefined;
if (family !== undefined && isFamilyName(family)) {
  const familySize = size as FamilyModelSize;
  if (cached) path = await ensureFamilyModel(family, familySize);
  else {
    path = values.out ?? `frontier-${family}-${size}-seed${seed}.gguf`;
    await writeFamilyModel(path, family, familySize, seed);
  }
} else if (cached) {
  path = await ensureTestModel(size as TestModelSize);
} else {
  path = values.out ?? `frontier-${size}-seed${seed}.gguf`;
  await writeTestModel(path, size as TestModelSize, seed);
}
await validateGguf(path);
console.log(path);
if (values.measure === true && family !== undefined && isFamilyName(family))
  console.log(JSON.stringify(await measureFamilyModel(family, path)));
