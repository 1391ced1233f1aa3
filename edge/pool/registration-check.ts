/**
 * Whether a heartbeat may register or refresh its worker's row, pure: the credential's binding
 * (worker id, URL or patterns, capacity ceiling, region) against the report and the pool's rows.
 * One credential has one row (keyed by its worker id); a report never changes another worker's row,
 * never takes a static (configured) member's URL unless the operator bound that exact URL to this
 * credential, never moves a live row to another URL, and never claims more sequences than the
 * ceiling. Each refusal names its reason (the metric label) and its protocol error.
 */
import type { WorkerReport } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import {
  bindingAdmits,
  type EndpointPattern,
  isExactBinding,
  type WorkerBinding,
  workerUrlAllowed,
} from "../config/registration.ts";

export type RefusalReason =
  | "no-token"
  | "unknown-worker"
  | "bad-token"
  | "revoked"
  | "invalid-report"
  | "unknown-region"
  | "region-not-bound"
  | "url-not-allowed"
  | "url-not-bound"
  | "static-worker"
  | "url-taken"
  | "url-change"
  | "capacity-over-ceiling";

export interface Refusal {
  reason: RefusalReason;
  status: 400 | 401 | 403 | 409;
  message: string;
  param?: string;
}

/** A pool row as the check needs it. */
export interface MemberView {
  id: string;
  url: string;
  static: boolean;
  lastHeartbeat: number | null;
  downUntil: number | null;
}

/**
 * A registered worker's URL stays its own this long after its last heartbeat (a restart on the same
 * address comes back to it); only then may another worker whose binding admits that URL take it.
 */
export const URL_RELEASE_MS = 5 * 60_000;

export interface RegistrationInput {
  binding: WorkerBinding;
  report: Pick<WorkerReport, "id" | "url" | "region" | "sequencesTotal">;
  allowList: readonly EndpointPattern[];
  members: readonly MemberView[];
  now: number;
  timeoutMs: number;
}

/** Accepted: `replaces` is the row whose URL this worker takes over (a static slot or a released URL). */
export type RegistrationCheck = { ok: true; replaces: MemberView | undefined } | { ok: false; refusal: Refusal };

export function checkRegistration(input: RegistrationInput): RegistrationCheck {
  const { binding, report, members, now } = input;
  const refuse = (reason: RefusalReason, status: Refusal["status"], message: string, param?: string) => ({
    ok: false as const,
    refusal: { reason, status, message, ...(param ? { param } : {}) },
  });
  if (binding.id !== report.id) return refuse("bad-token", 401, "This credential belongs to another worker id");
  if (binding.region !== undefined && binding.region !== report.region) {
    return refuse("region-not-bound", 403, `region: this credential is bound to region "${binding.region}"`, "region");
  }
  if (!workerUrlAllowed(report.url, input.allowList)) {
    return refuse("url-not-allowed", 403, "url: this worker endpoint is not in POOL_ALLOWED_WORKER_URLS", "url");
  }
  if (!bindingAdmits(binding, report.url)) {
    return refuse("url-not-bound", 403, "url: this credential is not bound to this worker endpoint", "url");
  }
  const holder = members.find((m) => m.url === report.url && m.id !== report.id);
  let replaces: MemberView | undefined;
  if (holder?.static) {
    // A static member is the operator's: only a credential bound to exactly its URL (or the shared
    // local-development token) may heartbeat for it, and only while no other worker holds it.
    const unclaimed = holder.id === holder.url;
    if (!unclaimed || !(isExactBinding(binding) || binding.source === "dev")) {
      return refuse("static-worker", 403, "url: this endpoint is a configured (static) worker of another id", "url");
    }
    replaces = holder;
  } else if (holder) {
    if (holder.lastHeartbeat !== null && now - holder.lastHeartbeat <= URL_RELEASE_MS) {
      return refuse("url-taken", 409, "url: another worker is registered at this endpoint", "url");
    }
    replaces = holder;
  }
  const own = members.find((m) => m.id === report.id);
  if (own && own.url !== report.url && isLive(own, now, input.timeoutMs)) {
    return refuse(
      "url-change",
      409,
      "url: this worker is registered and alive at another endpoint; a worker changes its URL only after it left or timed out",
      "url",
    );
  }
  if (report.sequencesTotal > binding.capacity) {
    return refuse(
      "capacity-over-ceiling",
      403,
      `sequences_total: this credential's capacity ceiling is ${binding.capacity} sequences`,
      "sequences_total",
    );
  }
  return { ok: true, replaces };
}

/** Heard from within the timeout and not marked down or gone. */
function isLive(member: MemberView, now: number, timeoutMs: number): boolean {
  if (member.downUntil !== null && member.downUntil > now) return false;
  return member.lastHeartbeat !== null && now - member.lastHeartbeat <= timeoutMs;
}
