/**
 * Random-weight `llama` GGUFs that carry a model family's REAL vocabulary, pre-tokenizer, special
 * tokens and chat template (see families.ts), at a test width with the output tied to token_embd
 * so the file stays small. Generated once into `.models/`, keyed by a version, the family, the
 * size, the tokenizer package version and the chat template.
 */
import { createHash } from "node:crypto";
import { access, readdir, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { FAMILIES, type FamilyName } from "./families.ts";
import { buildFamilyVocab, familyChatTemplate, familyTokenizerFiles } from "./family-vocab.ts";
import { validateGguf } from "./gguf-validate.ts";
import {
  DEFAULT_TEST_MODEL_SEED,
  llamaShapeMeta,
  type MetaValue,
  planTensors,
  TEST_MODEL_SPECS,
  type TestModelSize,
  testModelsDir,
  writeGguf,
} from "./gguf-writer.ts";

/** Bump when the family models' bytes change, so cached files are regenerated. */
const FAMILY_MODEL_VERSION = 1;

/** Sizes a family model can be generated at (`mid`: 512 wide, ~210-260 MB with these vocabularies: for benchmarks). */
export type FamilyModelSize = Extract<TestModelSize, "tiny" | "mid">;

/**
 * Write the `family` model of `size` to `path` (F16 matrices, output tied to token_embd).
 * `chatTemplate` replaces the family's real template (`null`: none), for format-detection tests.
 */
export async function writeFamilyModel(
  path: string,
  family: FamilyName,
  size: FamilyModelSize,
  seed: number = DEFAULT_TEST_MODEL_SEED,
  chatTemplate?: string | null,
): Promise<void> {
  const spec = FAMILIES[family];
  const { tokenizerJson } = await familyTokenizerFiles(family);
  const vocab = buildFamilyVocab(spec, tokenizerJson);
  const shape = { ...TEST_MODEL_SPECS[size], vocab: vocab.tokens.length, weightType: "F16" as const };
  const id = (role: string, text: string | undefined): Array<[string, MetaValue]> => {
    if (text === undefined) return [];
    const t = vocab.added.get(text);
    if (t === undefined) throw new Error(`${family}: ${role} token ${text} is not in the vocabulary`);
    return [[`tokenizer.ggml.${role}_token_id`, { t: "u32", v: t }]];
  };
  const template = chatTemplate === undefined ? await familyChatTemplate(family) : (chatTemplate ?? undefined);
  const meta: Array<[string, MetaValue]> = [
    ...llamaShapeMeta(`frontier-${family}-${size}`, shape),
    ["tokenizer.ggml.model", { t: "str", v: "gpt2" }],
    ["tokenizer.ggml.pre", { t: "str", v: spec.pre }],
    ["tokenizer.ggml.tokens", { t: "strs", v: vocab.tokens }],
    ["tokenizer.ggml.token_type", { t: "i32s", v: vocab.tokenTypes }],
    ["tokenizer.ggml.merges", { t: "strs", v: vocab.merges }],
    ...id("bos", spec.special.bos),
    ...id("eos", spec.special.eos),
    ...id("eot", spec.special.eot),
    ...id("eom", spec.special.eom),
    ...id("unknown", spec.special.unk),
    ...id("padding", spec.special.pad),
    ["tokenizer.ggml.add_bos_token", { t: "bool", v: spec.addBos }],
    ["tokenizer.ggml.add_eos_token", { t: "bool", v: false }],
  ];
  if (template !== undefined) meta.push(["tokenizer.chat_template", { t: "str", v: template }]);
  await writeGguf(path, meta, planTensors(shape, true), seed);
}

/** Path of the cached `family` model of `size` (it may not exist yet). */
async function familyModelPath(family: FamilyName, size: FamilyModelSize): Promise<string> {
  const { source } = await familyTokenizerFiles(family);
  const key = createHash("sha256")
    .update(`${FAMILY_MODEL_VERSION}|${family}|${size}|${source}|`)
    .update((await familyChatTemplate(family)) ?? "<no template>")
    .digest("hex")
    .slice(0, 10);
  return join(testModelsDir(), `frontier-${family}-${size}-v${FAMILY_MODEL_VERSION}-${key}.gguf`);
}

/** Delete earlier generations of the same family and size (another template or version): 20-40 MB each. */
async function pruneStale(current: string, family: FamilyName, size: FamilyModelSize): Promise<void> {
  const prefix = `frontier-${family}-${size}-v`;
  for (const name of await readdir(dirname(current))) {
    if (name.startsWith(prefix) && name.endsWith(".gguf") && name !== basename(current))
      await rm(join(dirname(current), name), { force: true });
  }
}

const pending = new Map<string, Promise<string>>();

/**
 * The path of the cached `family` model of `size`, generated (seed 1) and validated once if
 * missing. A new chat template file or package version gives a new file name.
 */
export async function ensureFamilyModel(family: FamilyName, size: FamilyModelSize = "tiny"): Promise<string> {
  const path = await familyModelPath(family, size);
  let p = pending.get(path);
  if (p === undefined) {
    p = access(path).then(
      () => path,
      async (err: unknown) => {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
        await writeFamilyModel(path, family, size, DEFAULT_TEST_MODEL_SEED);
        // llama.cpp aborts the process on some malformed files: never leave one in the cache.
        await validateGguf(path).catch(async (invalid: unknown) => {
          await rm(path, { force: true });
          throw invalid;
        });
        await pruneStale(path, family, size);
        return path;
      },
    );
    p.catch(() => pending.delete(path));
    pending.set(path, p);
  }
  return p;
}
