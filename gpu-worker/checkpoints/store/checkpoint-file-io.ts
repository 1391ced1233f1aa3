/**
 * Durable file writes (fsync of files and directories) and the errors a checkpoint file read maps to:
 * a seal that does not open, a missing file.
 */
import { open } from "node:fs/promises";
import { SealedFileDamagedError, WrongDataKeyError } from "../state/sealed-file.ts";
import { CheckpointKeyError, CorruptCheckpointError } from "./types.ts";

/** A seal that does not open: the wrong key keeps the entry, a damaged file is corrupt. */
export function sealError(error: unknown, id: string): unknown {
  if (error instanceof WrongDataKeyError) return new CheckpointKeyError(id);
  if (error instanceof SealedFileDamagedError) {
    return new CorruptCheckpointError(`checkpoint ${id}: ${error.message}`, { checkpointId: id, kind: "checksum" });
  }
  return error;
}

export function missingOr(error: unknown, id: string): unknown {
  return isNotFound(error)
    ? new CorruptCheckpointError(`checkpoint ${id}: a file is missing`, { checkpointId: id, kind: "missing" })
    : error;
}

export async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function writeFileSynced(path: string, bytes: Buffer): Promise<void> {
  const handle = await open(path, "w");
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function fsyncDirectory(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } catch (error) {
    // Some platforms cannot fsync a directory; the renames are still atomic there.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "EINVAL" && code !== "EPERM") throw error;
  } finally {
    await handle.close();
  }
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}
