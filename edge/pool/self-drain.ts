/**
 * A worker draining itself (`POST /internal/pool/drain`, bearer: its own pool credential): on
 * shutdown a worker asks the edge to move its sessions away, with the credential it heartbeats
 * with, so no worker holds the admin token. The body names the worker's id and region; the
 * credential must be that id's, and the row drained is the one keyed by that id in that region
 * (never a row matched by URL, never another id's, never a static row the credential does not hold).
 */
import type { WorkerBinding } from "../config/registration.ts";
import { asObject, asString, fail, required } from "../core/check.ts";
import type { PoolWorker } from "./placement.ts";

export interface SelfDrainRequest {
  id: string;
  region: string;
}

const ID = /^[A-Za-z0-9._:-]{1,64}$/;
const REGION = /^[a-z0-9][a-z0-9-]{0,31}$/;

export function parseSelfDrainRequest(raw: unknown): SelfDrainRequest {
  const body = asObject(raw, []);
  const id = asString(required(body, "id", []), ["id"]);
  const region = asString(required(body, "region", []), ["region"]);
  if (!ID.test(id)) fail(["id"], "Invalid worker id");
  if (!REGION.test(region)) fail(["region"], "Invalid region");
  return { id, region };
}

/**
 * The one row `binding` may drain in `region`: keyed by the credential's id, in the credential's
 * region when it names one, and not down (a restarted worker's old row is not it). Undefined: none.
 */
export function ownDrainableRow(
  workers: readonly PoolWorker[],
  binding: WorkerBinding,
  region: string,
): PoolWorker | undefined {
  if (binding.region !== undefined && binding.region !== region) return undefined;
  return workers.find((w) => w.id === binding.id && w.region === region && w.state !== "down");
}
