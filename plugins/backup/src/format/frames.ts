import { createCipheriv, createDecipheriv } from "node:crypto";
import { locate, VpbkError } from "./errors.js";
import { NONCE_BYTES, TAG_BYTES, type VpbkKeys } from "./keys.js";
import type { ByteSource } from "./source.js";

/**
 * The payload's frames (backup-format.md §2.4):
 *
 * ```
 * frame     = frame_hdr[16] ‖ ciphertext[pt_len] ‖ tag[16]
 * frame_hdr = u32 pt_len ‖ u8 kind ‖ u8[3] zero ‖ u64 seq
 * nonce     = 0x00 0x00 0x00 ‖ u64 seq ‖ final            (final = 0x01 only for FINAL)
 * aad       = "vpbk1 frame" ‖ H[32] ‖ frame_hdr[16] ‖ prev_tag[16]   (16 × 0x00 for seq 0)
 * ```
 *
 * Every DATA frame but the last carries exactly 64 KiB; exactly one FINAL frame follows the last
 * DATA frame and the file ends right after its tag. The AAD chains each frame to the header and
 * to the frame before it, so frames cannot be reordered, dropped, duplicated or moved between
 * generations.
 */

/** Plaintext bytes of a full DATA frame (the header's `frame_size`). */
export const FRAME_PLAINTEXT_BYTES = 65_536;
/** Bytes of a frame header. */
export const FRAME_HEADER_BYTES = 16;
/** Bytes a frame adds to its plaintext: its header and its tag. */
export const FRAME_OVERHEAD_BYTES = FRAME_HEADER_BYTES + TAG_BYTES;
/** Plaintext bytes of the FINAL frame. */
export const FINAL_PLAINTEXT_BYTES = 64;
/** Bytes of the whole FINAL frame at the end of the file. */
export const FINAL_FRAME_BYTES = FINAL_PLAINTEXT_BYTES + FRAME_OVERHEAD_BYTES;
/** At most 2³² frames (FINAL included) per generation (256 TiB). */
export const MAX_FRAMES = 2 ** 32;

/** Most time between `created_ms` and `sealed_ms` (§2.7 check 8). */
export const MAX_SEAL_DELAY_MS = 24 * 60 * 60 * 1000;

/** Frame kinds. */
export const FRAME_DATA = 0x01;
export const FRAME_FINAL = 0x02;

const AAD_DOMAIN = Buffer.from("vpbk1 frame", "ascii");
const FINAL_MAGIC = Buffer.from("VPBK-END", "ascii");

/** What the FINAL frame carries. */
export interface VpbkTrailer {
  /** DATA frames before it. */
  dataFrames: number;
  /** Plaintext bytes in those frames. */
  dataBytes: number;
  /** Wall clock after the last source byte was read, Unix ms UTC. */
  sealedMs: number;
  /** The record stream's content root (records.ts). */
  contentRoot: Buffer;
}

/** `frame_hdr` of frame `seq`. */
export function encodeFrameHeader(ptLen: number, kind: number, seq: number): Buffer {
  const head = Buffer.alloc(FRAME_HEADER_BYTES);
  head.writeUInt32BE(ptLen, 0);
  head.writeUInt8(kind, 4);
  head.writeUInt32BE(Math.floor(seq / 2 ** 32), 8);
  head.writeUInt32BE(seq % 2 ** 32, 12);
  return head;
}

/** The nonce of frame `seq`: an 11-byte big-endian counter and the final flag. */
export function frameNonce(seq: number, final: boolean): Buffer {
  const nonce = Buffer.alloc(NONCE_BYTES);
  nonce.writeUInt32BE(Math.floor(seq / 2 ** 32), 3);
  nonce.writeUInt32BE(seq % 2 ** 32, 7);
  nonce[11] = final ? 0x01 : 0x00;
  return nonce;
}

/** The AAD of a frame: domain, H, its header and the previous frame's tag. */
export function frameAad(headerHash: Buffer, frameHeader: Uint8Array, prevTag: Uint8Array): Buffer {
  return Buffer.concat([AAD_DOMAIN, headerHash, frameHeader, prevTag]);
}

/** The 64-byte FINAL plaintext: `"VPBK-END" ‖ u64 data_frames ‖ u64 data_bytes ‖ u64 sealed_ms ‖ root`. */
export function encodeTrailer(trailer: VpbkTrailer): Buffer {
  const pt = Buffer.alloc(FINAL_PLAINTEXT_BYTES);
  FINAL_MAGIC.copy(pt, 0);
  pt.writeBigUInt64BE(BigInt(trailer.dataFrames), 8);
  pt.writeBigUInt64BE(BigInt(trailer.dataBytes), 16);
  pt.writeBigUInt64BE(BigInt(trailer.sealedMs), 24);
  trailer.contentRoot.copy(pt, 32);
  return pt;
}

/** Reads an authenticated FINAL plaintext (`E_TRAILER` when it is not one). */
export function decodeTrailer(pt: Buffer): VpbkTrailer {
  if (pt.length !== FINAL_PLAINTEXT_BYTES || !pt.subarray(0, 8).equals(FINAL_MAGIC)) {
    throw new VpbkError("E_TRAILER", "the FINAL frame does not start with VPBK-END");
  }
  const numbers = [8, 16, 24].map((at) => pt.readBigUInt64BE(at));
  if (numbers.some((n) => n > BigInt(Number.MAX_SAFE_INTEGER))) {
    throw new VpbkError("E_TRAILER", "a FINAL frame count is out of range");
  }
  const [dataFrames, dataBytes, sealedMs] = numbers.map(Number) as [number, number, number];
  return { dataFrames, dataBytes, sealedMs, contentRoot: Buffer.from(pt.subarray(32, 64)) };
}

/** Encrypts one frame; the returned frame's last 16 bytes are its tag. */
export function sealFrame(keys: VpbkKeys, seq: number, kind: number, plaintext: Uint8Array, prevTag: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(FRAME_OVERHEAD_BYTES + plaintext.length);
  sealFrameInto(frame, 0, keys, seq, kind, plaintext, prevTag);
  return frame;
}

/** Encrypts one frame into `out` (which has room for it) at `at`; returns where the frame ends. */
function sealFrameInto(
  out: Buffer,
  at: number,
  keys: VpbkKeys,
  seq: number,
  kind: number,
  plaintext: Uint8Array,
  prevTag: Buffer,
): number {
  const head = encodeFrameHeader(plaintext.length, kind, seq);
  head.copy(out, at);
  const cipher = createCipheriv("aes-256-gcm", keys.payloadKey, frameNonce(seq, kind === FRAME_FINAL), {
    authTagLength: TAG_BYTES,
  });
  cipher.setAAD(frameAad(keys.headerHash, head, prevTag));
  let end = at + FRAME_HEADER_BYTES;
  end += cipher.update(plaintext).copy(out, end);
  end += cipher.final().copy(out, end);
  end += cipher.getAuthTag().copy(out, end);
  return end;
}

/**
 * Decrypts and authenticates one frame; the plaintext is returned only after `final()` accepted
 * the tag (`E_FRAME_AUTH` otherwise). `tag` must be 16 bytes: `authTagLength: 16` refuses a
 * shorter one.
 */
export function openFrame(
  keys: VpbkKeys,
  seq: number,
  frameHeader: Buffer,
  ciphertext: Buffer,
  tag: Buffer,
  prevTag: Buffer,
  where: { index: number; offset: number },
): Buffer {
  const final = frameHeader[4] === FRAME_FINAL;
  const decipher = createDecipheriv("aes-256-gcm", keys.payloadKey, frameNonce(seq, final), {
    authTagLength: TAG_BYTES,
  });
  decipher.setAAD(frameAad(keys.headerHash, frameHeader, prevTag));
  let plaintext: Buffer;
  try {
    decipher.setAuthTag(tag);
    plaintext = decipher.update(ciphertext);
    decipher.final();
  } catch (cause) {
    throw new VpbkError("E_FRAME_AUTH", `frame ${where.index} does not authenticate`, { ...where, cause });
  }
  return plaintext;
}

/**
 * Cuts a plaintext stream into frames: full 64 KiB DATA frames as the bytes arrive, then the last
 * (short) DATA frame and the FINAL frame in {@link finish}. It holds at most one frame of
 * plaintext. Sealed frames are returned in buffers of `framesPerBuffer` frames (default 1), back
 * to back, so a writer pushes and writes fewer, larger buffers; a buffer is new and never touched
 * again once returned, whoever holds it.
 */
export class FrameSealer {
  readonly #keys: VpbkKeys;
  readonly #framesPerBuffer: number;
  readonly #pending = Buffer.allocUnsafe(FRAME_PLAINTEXT_BYTES);
  readonly #prevTag = Buffer.alloc(TAG_BYTES);
  #pendingBytes = 0;
  #seq = 0;
  #dataBytes = 0;
  #finished = false;
  #out: Buffer | undefined;
  #outBytes = 0;
  #outFrames = 0;

  constructor(keys: VpbkKeys, options: { framesPerBuffer?: number | undefined } = {}) {
    this.#keys = keys;
    this.#framesPerBuffer = Math.max(1, Math.floor(options.framesPerBuffer ?? 1));
  }

  /** DATA frames sealed so far. */
  get dataFrames(): number {
    return this.#seq;
  }

  /** Plaintext bytes taken so far. */
  get dataBytes(): number {
    return this.#dataBytes + this.#pendingBytes;
  }

  /** Takes plaintext; returns the buffers of frames it completed (possibly none). */
  write(data: Uint8Array): Buffer[] {
    if (this.#finished) throw new VpbkError("E_USAGE", "the frame sealer is finished");
    const done: Buffer[] = [];
    let at = 0;
    while (at < data.length) {
      if (this.#pendingBytes === 0 && data.length - at >= FRAME_PLAINTEXT_BYTES) {
        this.#seal(FRAME_DATA, data.subarray(at, at + FRAME_PLAINTEXT_BYTES), done);
        at += FRAME_PLAINTEXT_BYTES;
        continue;
      }
      const n = Math.min(FRAME_PLAINTEXT_BYTES - this.#pendingBytes, data.length - at);
      this.#pending.set(data.subarray(at, at + n), this.#pendingBytes);
      this.#pendingBytes += n;
      at += n;
      if (this.#pendingBytes === FRAME_PLAINTEXT_BYTES) {
        this.#pendingBytes = 0;
        this.#seal(FRAME_DATA, this.#pending, done);
      }
    }
    return done;
  }

  /** Seals the last DATA frame (if bytes are pending) and the FINAL frame; returns the buffers left. */
  finish(trailer: Pick<VpbkTrailer, "sealedMs" | "contentRoot">): Buffer[] {
    const done: Buffer[] = [];
    if (this.#pendingBytes > 0) {
      const last = this.#pending.subarray(0, this.#pendingBytes);
      this.#pendingBytes = 0;
      this.#seal(FRAME_DATA, last, done);
    }
    const final = encodeTrailer({ ...trailer, dataFrames: this.#seq, dataBytes: this.#dataBytes });
    this.#seal(FRAME_FINAL, final, done);
    if (this.#out !== undefined) done.push(this.#out.subarray(0, this.#outBytes));
    this.#out = undefined;
    this.#finished = true;
    return done;
  }

  #seal(kind: number, plaintext: Uint8Array, done: Buffer[]): void {
    if (this.#seq >= MAX_FRAMES - 1 && kind === FRAME_DATA) {
      throw new VpbkError("E_USAGE", `a generation holds at most ${MAX_FRAMES} frames`);
    }
    if (this.#out === undefined) {
      this.#out = Buffer.allocUnsafe(this.#framesPerBuffer * (FRAME_OVERHEAD_BYTES + FRAME_PLAINTEXT_BYTES));
      this.#outBytes = 0;
      this.#outFrames = 0;
    }
    const out = this.#out;
    const end = sealFrameInto(out, this.#outBytes, this.#keys, this.#seq, kind, plaintext, this.#prevTag);
    out.copy(this.#prevTag, 0, end - TAG_BYTES, end);
    this.#outBytes = end;
    this.#outFrames += 1;
    if (this.#outFrames === this.#framesPerBuffer) {
      done.push(out.subarray(0, end));
      this.#out = undefined;
    }
    if (kind === FRAME_DATA) {
      this.#seq += 1;
      this.#dataBytes += plaintext.length;
    }
  }
}

/** An authenticated DATA frame's plaintext and where the frame is. */
export interface DataFrame {
  final: false;
  index: number;
  offset: number;
  plaintext: Buffer;
}

/** The authenticated FINAL frame. */
export interface FinalFrame {
  final: true;
  index: number;
  offset: number;
  trailer: VpbkTrailer;
  /** Where the file must end: right after the FINAL frame. */
  end: number;
}

/**
 * Reads and authenticates the frames that follow the header at `start`, yielding each DATA
 * frame's plaintext only after its tag verified, then the FINAL frame; after the FINAL frame it
 * checks that nothing follows (`E_TRAILING`). It allocates one 65,552-byte frame buffer, reused,
 * and checks every length against 65536 before reading the bytes it announces.
 *
 * Errors carry the frame index and its byte offset: `E_NO_FINAL` (the file ends at a frame
 * boundary before the FINAL frame), `E_TRUNCATED`, `E_SEQ`, `E_KIND`, `E_FRAME_RSVD`, `E_LEN`
 * (including a DATA frame after a short one: not canonical), `E_FRAME_AUTH`, `E_TRAILER` (an
 * authentic FINAL frame that is not a trailer) and `E_TRAILING`.
 */
export async function* readFrames(
  source: ByteSource,
  keys: VpbkKeys,
  start: number,
): AsyncGenerator<DataFrame | FinalFrame, void, undefined> {
  const head = Buffer.alloc(FRAME_HEADER_BYTES);
  const body = Buffer.allocUnsafe(FRAME_PLAINTEXT_BYTES + TAG_BYTES);
  const prevTag = Buffer.alloc(TAG_BYTES);
  let offset = start;
  let seq = 0;
  let shortDataSeen = false;
  for (;;) {
    const where = { index: seq, offset };
    if (seq >= MAX_FRAMES) throw new VpbkError("E_SEQ", `more than ${MAX_FRAMES} frames`, where);
    const got = await source.read(head, 0, FRAME_HEADER_BYTES);
    if (got === 0) {
      throw new VpbkError(
        "E_NO_FINAL",
        seq === 0 ? "the archive ends after its header" : `the archive ends after frame ${seq - 1}, without FINAL`,
        where,
      );
    }
    if (got < FRAME_HEADER_BYTES) {
      throw new VpbkError("E_TRUNCATED", `the archive ends inside the header of frame ${seq}`, where);
    }
    const ptLen = head.readUInt32BE(0);
    const kind = head.readUInt8(4);
    if (head.readUInt32BE(8) !== 0 || head.readUInt32BE(12) !== seq) {
      throw new VpbkError("E_SEQ", `frame ${seq} says seq ${head.readBigUInt64BE(8)}`, where);
    }
    if (kind !== FRAME_DATA && kind !== FRAME_FINAL) {
      throw new VpbkError("E_KIND", `frame ${seq} has kind 0x${kind.toString(16).padStart(2, "0")}`, where);
    }
    if (head[5] !== 0 || head[6] !== 0 || head[7] !== 0) {
      throw new VpbkError("E_FRAME_RSVD", `frame ${seq} has a reserved byte set`, where);
    }
    if (kind === FRAME_DATA) {
      if (ptLen < 1 || ptLen > FRAME_PLAINTEXT_BYTES) {
        throw new VpbkError("E_LEN", `DATA frame ${seq} announces ${ptLen} bytes (1..${FRAME_PLAINTEXT_BYTES})`, where);
      }
      if (shortDataSeen) {
        throw new VpbkError("E_LEN", `DATA frame ${seq} follows a short DATA frame (not canonical)`, where);
      }
    } else if (ptLen !== FINAL_PLAINTEXT_BYTES) {
      throw new VpbkError("E_LEN", `the FINAL frame announces ${ptLen} bytes (${FINAL_PLAINTEXT_BYTES})`, where);
    }
    const want = ptLen + TAG_BYTES;
    if ((await source.read(body, 0, want)) < want) {
      throw new VpbkError("E_TRUNCATED", `the archive ends inside frame ${seq}`, where);
    }
    const tag = body.subarray(ptLen, want);
    const plaintext = openFrame(keys, seq, head, body.subarray(0, ptLen), tag, prevTag, where);
    tag.copy(prevTag);
    if (kind === FRAME_FINAL) {
      let trailer: VpbkTrailer;
      try {
        trailer = decodeTrailer(plaintext);
      } catch (error) {
        throw locate(error, seq, offset);
      }
      const end = offset + FRAME_OVERHEAD_BYTES + ptLen;
      yield { final: true, index: seq, offset, trailer, end };
      if ((await source.read(head, 0, 1)) > 0) {
        throw new VpbkError("E_TRAILING", "bytes follow the FINAL frame", { index: seq + 1, offset: end });
      }
      return;
    }
    shortDataSeen = ptLen < FRAME_PLAINTEXT_BYTES;
    yield { final: false, index: seq, offset, plaintext };
    offset += FRAME_OVERHEAD_BYTES + ptLen;
    seq += 1;
  }
}
