import { randomBytes } from "node:crypto";
import { VpbkError } from "./errors.js";
import { FRAME_PLAINTEXT_BYTES } from "./frames.js";
import { argon2idKek, type KdfParams, type KekDerivation, kdfLimitViolation, passphraseBytes } from "./kdf.js";
import {
  deriveSubkeys,
  headerMac,
  KEY_BYTES,
  macEqual,
  NONCE_BYTES,
  sha256,
  TAG_BYTES,
  unwrapDataKey,
  type VpbkKeys,
  wrapDataKey,
} from "./keys.js";

/**
 * The fixed 188-byte cleartext header (backup-format.md §2.3), big-endian throughout. It is
 * authenticated (the DK wrap's AAD covers bytes 0..96, the MAC bytes 0..156, and H every frame)
 * but not encrypted, so it holds only what unauthenticated tooling needs.
 */

/** Bytes of the header. */
export const HEADER_BYTES = 188;
/** `"\x89VPBK\r\n\x1a"`, PNG-style: catches text-mode transfers and truncation. */
export const VPBK_MAGIC: Buffer = Buffer.from([0x89, 0x56, 0x50, 0x42, 0x4b, 0x0d, 0x0a, 0x1a]);
/** The format version this library reads and writes. */
export const VPBK_VERSION = 1;
/** `kdf_id` 1: Argon2id v0x13. */
const KDF_ARGON2ID = 1;
/** `aead_id` 1: AES-256-GCM with a 16-byte tag. */
const AEAD_AES_256_GCM = 1;
const SALT_BYTES = 16;
const GENERATION_ID_BYTES = 16;

/** Field offsets (§2.3). */
const OFF = {
  magic: 0,
  version: 8,
  flags: 10,
  headerLen: 12,
  kdfId: 16,
  aeadId: 17,
  reserved1: 18,
  memoryKiB: 20,
  timeCost: 24,
  parallelism: 28,
  kdfSalt: 32,
  streamSalt: 48,
  createdMs: 64,
  generationId: 72,
  frameSize: 88,
  reserved2: 92,
  wrapNonce: 96,
  wrappedDk: 108,
  mac: 156,
} as const;

/** The header as read, after the structural and KDF-bound checks (§2.7 checks 1–3). */
export interface VpbkHeader {
  /** The 188 bytes, as in the file. */
  bytes: Buffer;
  version: number;
  kdf: KdfParams;
  /** When the generation's snapshot was pinned (T0), Unix ms UTC. Authenticated once unlocked. */
  createdMs: number;
  /** 16 random bytes, in lower-case hex. */
  generationId: string;
}

/** What unlocks a header: the passphrase (and the previous one after a rotation), or the DK itself. */
export type VpbkUnlock =
  | {
      passphrase: string | Uint8Array;
      /** Tried when `passphrase` fails (`SERVICE_BACKUP_PASSPHRASE_PREVIOUS`). */
      previousPassphrase?: string | Uint8Array | undefined;
      /** The Argon2id implementation; default {@link argon2idKek}. */
      deriveKek?: KekDerivation | undefined;
    }
  | {
      /** The generation's DK, as the writer holds it for its read-after-write check (§2.6 step 6). */
      dataKey: Uint8Array;
    };

/** Which secret opened the header. */
export type UnlockedWith = "passphrase" | "previousPassphrase" | "dataKey";

/**
 * Parses the header's first 188 bytes (`bytes` may be shorter when the file is) and checks, in the
 * order of §2.7: the size (`E_SHORT`), magic (`E_MAGIC`), version (`E_VERSION`), the fixed fields
 * (`E_HEADER`) and the KDF bounds (`E_KDF_LIMITS`). No KDF work, no allocation beyond a copy of
 * the header.
 */
export function parseHeader(bytes: Uint8Array): VpbkHeader {
  if (bytes.length < HEADER_BYTES) {
    throw new VpbkError("E_SHORT", `the file has ${bytes.length} bytes, fewer than the ${HEADER_BYTES}-byte header`, {
      offset: 0,
    });
  }
  const b = Buffer.from(bytes.subarray(0, HEADER_BYTES));
  if (!b.subarray(0, VPBK_MAGIC.length).equals(VPBK_MAGIC)) {
    throw new VpbkError("E_MAGIC", "not a .vpbk file (bad magic)", { offset: OFF.magic });
  }
  const version = b.readUInt16BE(OFF.version);
  if (version !== VPBK_VERSION) {
    throw new VpbkError("E_VERSION", `format version ${version} is not supported (this reads version 1)`, {
      offset: OFF.version,
    });
  }
  const fixed: [string, number, number, number][] = [
    ["flags", OFF.flags, b.readUInt16BE(OFF.flags), 0],
    ["header_len", OFF.headerLen, b.readUInt32BE(OFF.headerLen), HEADER_BYTES],
    ["kdf_id", OFF.kdfId, b.readUInt8(OFF.kdfId), KDF_ARGON2ID],
    ["aead_id", OFF.aeadId, b.readUInt8(OFF.aeadId), AEAD_AES_256_GCM],
    ["reserved", OFF.reserved1, b.readUInt16BE(OFF.reserved1), 0],
    ["frame_size", OFF.frameSize, b.readUInt32BE(OFF.frameSize), FRAME_PLAINTEXT_BYTES],
    ["reserved", OFF.reserved2, b.readUInt32BE(OFF.reserved2), 0],
  ];
  for (const [name, offset, actual, expected] of fixed) {
    if (actual !== expected) {
      throw new VpbkError("E_HEADER", `header field ${name} is ${actual}, expected ${expected}`, { offset });
    }
  }
  const created = b.readBigUInt64BE(OFF.createdMs);
  if (created > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new VpbkError("E_HEADER", `header field created_ms ${created} is out of range`, { offset: OFF.createdMs });
  }
  const kdf: KdfParams = {
    memoryKiB: b.readUInt32BE(OFF.memoryKiB),
    timeCost: b.readUInt32BE(OFF.timeCost),
    parallelism: b.readUInt32BE(OFF.parallelism),
  };
  const violation = kdfLimitViolation(kdf);
  if (violation !== undefined) throw new VpbkError("E_KDF_LIMITS", violation, { offset: OFF.memoryKiB });
  return {
    bytes: b,
    version,
    kdf,
    createdMs: Number(created),
    generationId: b.subarray(OFF.generationId, OFF.generationId + GENERATION_ID_BYTES).toString("hex"),
  };
}

/** The inputs of a new header; the random fields default to fresh CSPRNG bytes. */
export interface NewHeaderOptions {
  passphrase: string | Uint8Array;
  /** T0, Unix ms UTC. */
  createdMs: number;
  kdf: KdfParams;
  deriveKek?: KekDerivation | undefined;
  /** A KEK derived beforehand ({@link deriveKekAhead}) with these parameters: no Argon2id work here. */
  kek?: PreparedKek | undefined;
}

/** A KEK and the random salt it was derived with, for one header. */
export interface PreparedKek {
  salt: Buffer;
  key: Buffer;
}

/**
 * Runs the Argon2id work of a new header ahead of it, with a fresh salt: the writer of a generation
 * does it before taking the database snapshot, so Argon2id's memory and the image are never held
 * at once. The KEK depends on the passphrase, the salt and the parameters, not on T0.
 */
export async function deriveKekAhead(
  passphrase: string | Uint8Array,
  kdf: KdfParams,
  deriveKek: KekDerivation = argon2idKek,
): Promise<PreparedKek> {
  const violation = kdfLimitViolation(kdf);
  if (violation !== undefined) throw new VpbkError("E_USAGE", `KDF parameters out of bounds: ${violation}`);
  const salt = randomBytes(SALT_BYTES);
  return { salt, key: await deriveKek(passphraseBytes(passphrase), salt, kdf) };
}

/**
 * Makes a new generation's header and keys: a fresh DK, salts, generation id and wrap nonce, the
 * KEK from the passphrase, the wrap, the MAC and H. Every call draws a new DK: a generation is
 * never appended to or resumed.
 */
export async function createHeader(options: NewHeaderOptions): Promise<{ header: VpbkHeader; keys: VpbkKeys }> {
  const { createdMs, kdf } = options;
  if (!Number.isSafeInteger(createdMs) || createdMs < 0) {
    throw new VpbkError("E_USAGE", `createdMs must be a non-negative integer of Unix ms, not ${createdMs}`);
  }
  const violation = kdfLimitViolation(kdf);
  if (violation !== undefined) throw new VpbkError("E_USAGE", `KDF parameters out of bounds: ${violation}`);
  const passphrase = passphraseBytes(options.passphrase);

  const b = Buffer.alloc(HEADER_BYTES);
  VPBK_MAGIC.copy(b, OFF.magic);
  b.writeUInt16BE(VPBK_VERSION, OFF.version);
  b.writeUInt16BE(0, OFF.flags);
  b.writeUInt32BE(HEADER_BYTES, OFF.headerLen);
  b.writeUInt8(KDF_ARGON2ID, OFF.kdfId);
  b.writeUInt8(AEAD_AES_256_GCM, OFF.aeadId);
  b.writeUInt32BE(kdf.memoryKiB, OFF.memoryKiB);
  b.writeUInt32BE(kdf.timeCost, OFF.timeCost);
  b.writeUInt32BE(kdf.parallelism, OFF.parallelism);
  (options.kek?.salt ?? randomBytes(SALT_BYTES)).copy(b, OFF.kdfSalt);
  randomBytes(SALT_BYTES).copy(b, OFF.streamSalt);
  b.writeBigUInt64BE(BigInt(createdMs), OFF.createdMs);
  randomBytes(GENERATION_ID_BYTES).copy(b, OFF.generationId);
  b.writeUInt32BE(FRAME_PLAINTEXT_BYTES, OFF.frameSize);
  randomBytes(NONCE_BYTES).copy(b, OFF.wrapNonce);

  const kek = options.kek
    ? Buffer.from(options.kek.key)
    : await (options.deriveKek ?? argon2idKek)(passphrase, field(b, OFF.kdfSalt, SALT_BYTES), kdf);
  const dataKey = randomBytes(KEY_BYTES);
  const wrapped = wrapDataKey(kek, field(b, OFF.wrapNonce, NONCE_BYTES), dataKey, b.subarray(0, OFF.wrapNonce));
  kek.fill(0);
  wrapped.copy(b, OFF.wrappedDk);
  const { headerKey, payloadKey } = deriveSubkeys(dataKey, field(b, OFF.streamSalt, SALT_BYTES));
  headerMac(headerKey, b.subarray(0, OFF.mac)).copy(b, OFF.mac);
  return {
    header: parseHeader(b),
    keys: { dataKey, headerKey, payloadKey, headerHash: sha256(b) },
  };
}

/**
 * Unlocks a parsed header (§2.7 checks 4 and 5): the KEK from the passphrase opens the wrapped DK
 * (`E_UNLOCK`: wrong passphrase or damaged header; the previous passphrase is tried next when
 * given), then the header MAC under K_hdr is compared in constant time (`E_HEADER_MAC`). With a
 * DK instead of a passphrase, only the MAC is checked.
 */
export async function unlockHeader(
  header: VpbkHeader,
  unlock: VpbkUnlock,
): Promise<{ keys: VpbkKeys; unlockedWith: UnlockedWith }> {
  const b = header.bytes;
  let dataKey: Buffer | undefined;
  let unlockedWith: UnlockedWith;
  if ("dataKey" in unlock) {
    if (unlock.dataKey.length !== KEY_BYTES) throw new VpbkError("E_USAGE", `a data key has ${KEY_BYTES} bytes`);
    dataKey = Buffer.from(unlock.dataKey);
    unlockedWith = "dataKey";
  } else {
    const derive = unlock.deriveKek ?? argon2idKek;
    const attempts: [UnlockedWith, string | Uint8Array][] = [["passphrase", unlock.passphrase]];
    if (unlock.previousPassphrase !== undefined) attempts.push(["previousPassphrase", unlock.previousPassphrase]);
    unlockedWith = "passphrase";
    for (const [which, passphrase] of attempts) {
      const kek = await derive(passphraseBytes(passphrase), field(b, OFF.kdfSalt, SALT_BYTES), header.kdf);
      dataKey = unwrapDataKey(
        kek,
        field(b, OFF.wrapNonce, NONCE_BYTES),
        field(b, OFF.wrappedDk, KEY_BYTES + TAG_BYTES),
        b.subarray(0, OFF.wrapNonce),
      );
      kek.fill(0);
      unlockedWith = which;
      if (dataKey !== undefined) break;
    }
    if (dataKey === undefined) {
      throw new VpbkError("E_UNLOCK", "wrong passphrase or damaged header", { offset: OFF.wrappedDk });
    }
  }
  const { headerKey, payloadKey } = deriveSubkeys(dataKey, field(b, OFF.streamSalt, SALT_BYTES));
  if (!macEqual(headerMac(headerKey, b.subarray(0, OFF.mac)), field(b, OFF.mac, KEY_BYTES))) {
    throw new VpbkError("E_HEADER_MAC", "the header MAC does not match: the header was altered", { offset: OFF.mac });
  }
  return { keys: { dataKey, headerKey, payloadKey, headerHash: sha256(b) }, unlockedWith };
}

function field(b: Buffer, offset: number, length: number): Buffer {
  return b.subarray(offset, offset + length);
}
