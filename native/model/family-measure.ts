/**
 * Size, load time and tokenization speed of a family model, for the numbers in reports:
 * `npm run model:family -- --family gpt-oss --measure`. Not a test (tests never assert time).
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createEngine } from "../engine.ts";
import type { FamilyName } from "./families.ts";

const REPO = join(fileURLToPath(import.meta.url), "..", "..", "..");
/** Prose, code and markdown from this repository, cut to this many characters. */
const TEXT_CHARS = 50_000;

export interface FamilyMeasurement {
  family: FamilyName;
  fileBytes: number;
  loadMs: number;
  /** CPU time of the load (all threads): less affected than `loadMs` by a busy machine. */
  loadCpuMs: number;
  textBytes: number;
  tokens: number;
  tokenizeMs: number;
}

async function sampleText(): Promise<string> {
  const files = ["README.md", "docs/architecture.md", "native/engine.ts", "native/model/gguf-validate.ts"];
  const parts = await Promise.all(files.map((f) => readFile(join(REPO, f), "utf8")));
  let text = parts.join("\n");
  while (text.length < TEXT_CHARS) text += `\n${text}`;
  return text.slice(0, TEXT_CHARS);
}

/** Load `path` (the `family` model) in the engine and tokenize a ~50 KB text (median of 5 runs). */
export async function measureFamilyModel(family: FamilyName, path: string): Promise<FamilyMeasurement> {
  const text = await sampleText();
  const started = performance.now();
  const cpu = process.cpuUsage();
  const engine = await createEngine({
    modelPath: path,
    contextSize: 256,
    sequences: 1,
    threads: 1,
    gpu: false,
    flashAttention: false,
    batchSize: 64,
  });
  const loadMs = performance.now() - started;
  const { user, system } = process.cpuUsage(cpu);
  try {
    const runs: number[] = [];
    let tokens = 0;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      tokens = engine.tokenize(text, { special: false }).length;
      runs.push(performance.now() - t);
    }
    runs.sort((a, b) => a - b);
    return {
      family,
      fileBytes: (await stat(path)).size,
      loadMs: Math.round(loadMs),
      loadCpuMs: Math.round((user + system) / 1000),
      textBytes: Buffer.byteLength(text),
      tokens,
      tokenizeMs: Math.round(runs[2] ?? 0),
    };
  } finally {
    await engine.dispose();
  }
}
