/** The heartbeat body a GPU worker sends (gpu-worker/pool/heartbeat.ts), parsed into a WorkerReport. */
import { isPrefixFingerprint } from "../../shared/prefix-fingerprint.ts";
import { asArray, asBoolean, asInteger, asObject, asString, fail, required } from "../check.ts";
import { isHttpUrl } from "../config-values.ts";
import type { WorkerReport } from "./pool-do.ts";

const COUNT = { min: 0, max: 1_000_000 };
const MAX_PREFIXES = 64;

export function parseWorkerReport(raw: unknown): WorkerReport {
  const body = asObject(raw, []);
  const text = (key: string, pattern: RegExp): string => {
    const value = asString(required(body, key, []), [key]);
    if (!pattern.test(value)) fail([key], `Invalid value`);
    return value;
  };
  const count = (key: string): number => asInteger(required(body, key, []), [key], COUNT);
  const url = asString(required(body, "url", []), ["url"]).replace(/\/+$/, "");
  if (!isHttpUrl(url) || url.length > 512) fail(["url"], "Input should be an http(s) URL");
  const prefixes = asArray(body.prefixes ?? [], ["prefixes"]);
  if (prefixes.length > MAX_PREFIXES) fail(["prefixes"], `At most ${MAX_PREFIXES} fingerprints`);
  return {
    id: text("id", /^[A-Za-z0-9._:-]{1,64}$/),
    region: text("region", /^[a-z0-9][a-z0-9-]{0,31}$/),
    url,
    boot: text("boot", /^[A-Za-z0-9_-]{1,64}$/),
    modelIdentity: text("model_identity", /^[\x20-\x7e]{0,256}$/),
    sequencesTotal: count("sequences_total"),
    sequencesFree: count("sequences_free"),
    queueDepth: count("queue_depth"),
    activeRequests: count("active_requests"),
    residentSessions: count("resident_sessions"),
    prefixes: prefixes.map((p, i) => (isPrefixFingerprint(p) ? p : fail(["prefixes", i], "Invalid fingerprint"))),
    draining: asBoolean(body.draining ?? false, ["draining"]),
    leaving: asBoolean(body.leaving ?? false, ["leaving"]),
  };
}
