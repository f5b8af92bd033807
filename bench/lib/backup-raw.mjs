import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open } from "node:fs/promises";

/**
 * The raw AES-256-GCM baselines of the backup bench: what the `.vpbk` format costs at the least
 * with Node's crypto, doing the same I/O as the library. Plaintext frames of 64 KiB (the format's),
 * one cipher object per frame with a 12-byte counter nonce, a 16-byte tag after each frame, and no
 * AAD, no frame header, no hashing, no records. Files are read in chunks of 256 KiB (the
 * library's read-ahead), four frames a chunk, and the output written once a chunk.
 */

const FRAME = 64 * 1024;
const TAG = 16;
const CHUNK_FRAMES = 4;

function nonce(seq) {
  const n = Buffer.alloc(12);
  n.writeUInt32BE(Math.floor(seq / 2 ** 32), 3);
  n.writeUInt32BE(seq % 2 ** 32, 7);
  return n;
}

async function writeAll(handle, buffer, length) {
  let written = 0;
  while (written < length) written += (await handle.write(buffer, written, length - written)).bytesWritten;
}

/** Reads until `buffer` is full or the file ends. */
async function readFull(handle, buffer, length) {
  let got = 0;
  while (got < length) {
    const { bytesRead } = await handle.read(buffer, got, length - got, null);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
}

async function createOutput(path) {
  return open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
}

/**
 * Reads every file of `files` in order, encrypts it in 64 KiB frames (one `createCipheriv` per
 * frame, the last frame of a file may be shorter) and appends frame and tag to `output`, which is
 * fsynced at the end. Returns the plaintext bytes and the key for {@link rawDecrypt}.
 * @param {string[]} files
 * @param {string} output
 */
export async function rawEncrypt(files, output) {
  const key = randomBytes(32);
  const plain = Buffer.alloc(FRAME * CHUNK_FRAMES);
  const sealed = Buffer.alloc((FRAME + TAG) * CHUNK_FRAMES);
  const out = await createOutput(output);
  let seq = 0;
  let bytes = 0;
  try {
    for (const file of files) {
      const input = await open(file, "r");
      try {
        for (;;) {
          const got = await readFull(input, plain, plain.length);
          if (got === 0) break;
          let at = 0;
          for (let start = 0; start < got; start += FRAME) {
            const end = Math.min(got, start + FRAME);
            const cipher = createCipheriv("aes-256-gcm", key, nonce(seq++));
            at += cipher.update(plain.subarray(start, end)).copy(sealed, at);
            at += cipher.final().copy(sealed, at);
            at += cipher.getAuthTag().copy(sealed, at);
          }
          await writeAll(out, sealed, at);
          bytes += got;
          if (got < plain.length) break;
        }
      } finally {
        await input.close();
      }
    }
    await out.sync();
  } finally {
    await out.close();
  }
  return { bytes, key: key.toString("hex") };
}

/**
 * Reads `input` (written by {@link rawEncrypt} from files of `sizes` bytes), decrypts and
 * authenticates every frame (one `createDecipheriv` per frame, `final()` checks the tag); with
 * `output`, writes the plaintext there and fsyncs it (restore-like), else discards it
 * (verify-like).
 * @param {string} input
 * @param {string} keyHex
 * @param {number[]} sizes plaintext bytes of each file, in order
 * @param {string} [output]
 */
export async function rawDecrypt(input, keyHex, sizes, output) {
  const key = Buffer.from(keyHex, "hex");
  const sealed = Buffer.alloc((FRAME + TAG) * CHUNK_FRAMES);
  const plain = Buffer.alloc(FRAME * CHUNK_FRAMES);
  const source = await open(input, "r");
  const out = output === undefined ? undefined : await createOutput(output);
  let seq = 0;
  let bytes = 0;
  try {
    for (const size of sizes) {
      let left = size;
      while (left > 0) {
        const chunk = Math.min(left, plain.length);
        const frames = Math.ceil(chunk / FRAME);
        const want = chunk + frames * TAG;
        if ((await readFull(source, sealed, want)) !== want) throw new Error(`${input} is truncated`);
        let at = 0;
        for (let start = 0; start < chunk; start += FRAME) {
          const length = Math.min(FRAME, chunk - start);
          const decipher = createDecipheriv("aes-256-gcm", key, nonce(seq++));
          decipher.setAuthTag(sealed.subarray(at + length, at + length + TAG));
          decipher.update(sealed.subarray(at, at + length)).copy(plain, start);
          decipher.final();
          at += length + TAG;
        }
        if (out) await writeAll(out, plain, chunk);
        bytes += chunk;
        left -= chunk;
      }
    }
    if (out) await out.sync();
  } finally {
    await source.close();
    await out?.close();
  }
  return { bytes };
}
