import type { FileHandle } from "node:fs/promises";

/** Reads from `position` until `buffer` is full or the file ends; the bytes read. */
export async function readFull(handle: FileHandle, buffer: Uint8Array, position: number): Promise<number> {
  let got = 0;
  while (got < buffer.length) {
    const { bytesRead } = await handle.read(buffer, got, buffer.length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
}

/** Whether `error` is a file system error with errno code `code` (`ENOENT`, `EEXIST`…). */
export function isCode(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}
