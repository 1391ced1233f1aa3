/**
 * The heartbeat body a GPU worker sends (gpu-worker/pool/heartbeat.ts): the proto's WorkerReport in
 * proto JSON, parsed with the generated schema, then checked against the bounds the pool relies on.
 */
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { type WorkerReport, WorkerReportSchema } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { isPrefixFingerprint } from "../../shared/prefix-fingerprint.ts";
import { asObject, fail } from "../core/check.ts";
import { isHttpUrl } from "../core/config-values.ts";

const MAX_COUNT = 1_000_000;
/** Prefix hashes the pool keeps per worker (a worker reports at most as many: gpu-worker/pool/prefix-advert.ts). */
export const MAX_PREFIXES = 512;

const PATTERNS: Partial<Record<keyof WorkerReport, RegExp>> = {
  id: /^[A-Za-z0-9._:-]{1,64}$/,
  region: /^[a-z0-9][a-z0-9-]{0,31}$/,
  boot: /^[A-Za-z0-9_-]{1,64}$/,
  modelIdentity: /^[\x20-\x7e]{0,256}$/,
};

const COUNTS = [
  "sequencesTotal",
  "sequencesFree",
  "queueDepth",
  "queueCapacity",
  "activeRequests",
  "residentSessions",
] as const;

export function parseWorkerReport(raw: unknown): WorkerReport {
  let report: WorkerReport;
  try {
    report = fromJson(WorkerReportSchema, asObject(raw, []) as JsonValue);
  } catch (error) {
    fail([], `Invalid worker report: ${error instanceof Error ? error.message : String(error)}`);
  }
  for (const [key, pattern] of Object.entries(PATTERNS)) {
    const value = report[key as keyof WorkerReport];
    if (typeof value !== "string" || !pattern.test(value)) fail([key], "Invalid value");
  }
  for (const key of COUNTS) if (report[key] > MAX_COUNT) fail([key], `Input should be at most ${MAX_COUNT}`);
  report.url = report.url.replace(/\/+$/, "");
  if (!isHttpUrl(report.url) || report.url.length > 512) fail(["url"], "Input should be an http(s) URL");
  if (report.prefixes.length > MAX_PREFIXES) fail(["prefixes"], `At most ${MAX_PREFIXES} fingerprints`);
  report.prefixes.forEach((p, i) => {
    if (!isPrefixFingerprint(p)) fail(["prefixes", i], "Invalid fingerprint");
  });
  return report;
}
