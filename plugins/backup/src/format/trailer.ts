import { open } from "node:fs/promises";
import { locate, VpbkError } from "./errors.js";
import {
  decodeTrailer,
  FINAL_FRAME_BYTES,
  FINAL_PLAINTEXT_BYTES,
  FRAME_FINAL,
  FRAME_HEADER_BYTES,
  FRAME_OVERHEAD_BYTES,
  FRAME_PLAINTEXT_BYTES,
  MAX_SEAL_DELAY_MS,
  openFrame,
  type VpbkTrailer,
} from "./frames.js";
import {
  HEADER_BYTES,
  parseHeader,
  unlockHeader,
  type UnlockedWith,
  type VpbkHeader,
  type VpbkUnlock,
} from "./header.js";
import { TAG_BYTES } from "./keys.js";

/**
 * Reads a generation's FINAL frame in O(1) by seeking to the tail (§2.4, used by point-in-time
 * selection in §4): unlocks the header, then authenticates the last 96 bytes with the 16 bytes
 * before them as the previous tag, and checks that the file's size agrees with the counts.
 *
 * This proves `sealed_ms`, the counts and the content root belong to this generation; it does
 * not verify the frames before it (use `verifyVpbk` or a full read for that).
 */
export async function readVpbkTrailer(
  path: string,
  unlock: VpbkUnlock,
): Promise<{ header: VpbkHeader; trailer: VpbkTrailer; unlockedWith: UnlockedWith }> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch (cause) {
    throw new VpbkError("E_IO", `cannot open ${path}`, { cause });
  }
  try {
    const size = (await handle.stat()).size;
    const head = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await handle.read(head, 0, HEADER_BYTES, 0);
    const header = parseHeader(head.subarray(0, bytesRead));
    const { keys, unlockedWith } = await unlockHeader(header, unlock);
    const offset = size - FINAL_FRAME_BYTES;
    if (offset < HEADER_BYTES) {
      throw new VpbkError("E_NO_FINAL", "the archive is too short to end with a FINAL frame", { offset: size });
    }
    const tail = Buffer.alloc(TAG_BYTES + FINAL_FRAME_BYTES);
    if (offset === HEADER_BYTES) {
      await handle.read(tail, TAG_BYTES, FINAL_FRAME_BYTES, offset);
    } else {
      await handle.read(tail, 0, tail.length, offset - TAG_BYTES);
    }
    const frame = tail.subarray(TAG_BYTES);
    const kind = frame.readUInt8(4);
    const reserved = frame[5] !== 0 || frame[6] !== 0 || frame[7] !== 0;
    if (kind !== FRAME_FINAL || frame.readUInt32BE(0) !== FINAL_PLAINTEXT_BYTES || reserved || frame.readUInt32BE(8)) {
      throw new VpbkError("E_NO_FINAL", "the archive does not end with a FINAL frame", { offset });
    }
    const seq = frame.readUInt32BE(12);
    const where = { index: seq, offset };
    const plaintext = openFrame(
      keys,
      seq,
      frame.subarray(0, FRAME_HEADER_BYTES),
      frame.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + FINAL_PLAINTEXT_BYTES),
      frame.subarray(FRAME_HEADER_BYTES + FINAL_PLAINTEXT_BYTES),
      tail.subarray(0, TAG_BYTES),
      where,
    );
    let trailer: VpbkTrailer;
    try {
      trailer = decodeTrailer(plaintext);
    } catch (error) {
      throw locate(error, where.index, where.offset);
    }
    const expectedSize =
      HEADER_BYTES + trailer.dataBytes + FRAME_OVERHEAD_BYTES * trailer.dataFrames + FINAL_FRAME_BYTES;
    if (
      trailer.dataFrames !== seq ||
      trailer.dataFrames !== Math.ceil(trailer.dataBytes / FRAME_PLAINTEXT_BYTES) ||
      expectedSize !== size
    ) {
      throw new VpbkError("E_TRAILER", "the FINAL frame's counts do not match the file's size", where);
    }
    if (trailer.sealedMs < header.createdMs || trailer.sealedMs > header.createdMs + MAX_SEAL_DELAY_MS) {
      throw new VpbkError("E_TRAILER", `sealed_ms ${trailer.sealedMs} is not within 24 h after created_ms`, where);
    }
    return { header, trailer, unlockedWith };
  } finally {
    await handle.close();
  }
}
