/**
 * Telling a checkpoint write that failed for want of disk space. The payload write fails with
 * ENOSPC; llama.cpp's state dump only says "Failed to save state to file", so a failure while the
 * store's file system has less than FULL_DISK_MARGIN_BYTES available counts as disk-full too.
 */
import { statfsSync } from "node:fs";

export const FULL_DISK_MARGIN_BYTES = 64 * 1024 * 1024;

/** Bytes available to this process on the file system holding `dir`. */
export function availableBytes(dir: string): number {
  const stats = statfsSync(dir);
  return stats.bavail * stats.bsize;
}

function hasCode(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && "code" in error && error.code === code;
}

export function isDiskFull(error: unknown, dir: string, available: (dir: string) => number = availableBytes): boolean {
  if (hasCode(error, "ENOSPC") || hasCode(error, "EDQUOT")) return true;
  try {
    return available(dir) < FULL_DISK_MARGIN_BYTES;
  } catch {
    return false;
  }
}
