// @ts-check
import { crc32 } from "node:zlib";
import { Refusal } from "./refusal.mjs";

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * Checks that a PNG is whole: its signature, then chunks up to `IEND`, each with its CRC right. libvips has
 * libspng ignore a broken CRC on image data whatever `failOn` says; a PNG that fails here is refused
 * (`invalid`) before it reaches the decoder.
 * @param {Buffer} bytes
 */
export function checkPngChunks(bytes) {
  if (!bytes.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Refusal("invalid", "not a PNG");
  let at = SIGNATURE.length;
  while (at + 12 <= bytes.length) {
    const end = at + 8 + bytes.readUInt32BE(at);
    if (end + 4 > bytes.length) break;
    const type = bytes.toString("latin1", at + 4, at + 8);
    if (crc32(bytes.subarray(at + 4, end)) !== bytes.readUInt32BE(end)) {
      throw new Refusal("invalid", `the PNG's ${type} chunk has a broken CRC`);
    }
    if (type === "IEND") return;
    at = end + 4;
  }
  throw new Refusal("invalid", "the PNG ends before its IEND chunk");
}
