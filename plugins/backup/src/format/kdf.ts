import { argon2id, hash } from "argon2";
import { VpbkError } from "./errors.js";

/** Argon2id cost parameters, as the header stores them (§2.3). */
export interface KdfParams {
  /** Memory in KiB (`argon2_m`). */
  memoryKiB: number;
  /** Passes (`argon2_t`). */
  timeCost: number;
  /** Lanes (`argon2_p`). */
  parallelism: number;
}

/**
 * The writer's default: 64 MiB, 3 passes, 4 lanes, RFC 9106's second recommended option (about
 * 0.6–0.8 s per unlock on a 2-core machine).
 */
export const DEFAULT_KDF: Readonly<KdfParams> = Object.freeze({ memoryKiB: 65_536, timeCost: 3, parallelism: 4 });

/** The bounds a header's KDF parameters must lie in (§2.3, §0.7): the DoS guard. */
export const KDF_LIMITS = Object.freeze({
  minMemoryKiB: 19_456,
  maxMemoryKiB: 1_048_576,
  minTimeCost: 1,
  maxTimeCost: 8,
  minParallelism: 1,
  maxParallelism: 16,
  /** m·t, in KiB·passes (2 GiB·pass). */
  maxMemoryTimeKiB: 2_097_152,
});

/**
 * Why `params` are out of bounds, or undefined when they are within them. Pure arithmetic on the
 * header's integers: it runs before any KDF work and allocates nothing.
 */
export function kdfLimitViolation(params: KdfParams): string | undefined {
  const { memoryKiB: m, timeCost: t, parallelism: p } = params;
  const L = KDF_LIMITS;
  if (!Number.isInteger(p) || p < L.minParallelism || p > L.maxParallelism) {
    return `argon2 p = ${p} is outside ${L.minParallelism}..${L.maxParallelism}`;
  }
  if (!Number.isInteger(m) || m < L.minMemoryKiB || m > L.maxMemoryKiB) {
    return `argon2 m = ${m} KiB is outside ${L.minMemoryKiB}..${L.maxMemoryKiB}`;
  }
  if (m < 8 * p) return `argon2 m = ${m} KiB is below 8·p = ${8 * p}`;
  if (!Number.isInteger(t) || t < L.minTimeCost || t > L.maxTimeCost) {
    return `argon2 t = ${t} is outside ${L.minTimeCost}..${L.maxTimeCost}`;
  }
  if (m * t > L.maxMemoryTimeKiB) return `argon2 m·t = ${m * t} KiB·passes exceeds ${L.maxMemoryTimeKiB}`;
  return undefined;
}

/**
 * Derives the 32-byte key-encryption key from the passphrase's bytes, the header's `kdf_salt` and
 * its parameters. {@link argon2idKek} is the real one; tests may pass a memoising wrapper of it
 * (backup-format.md §5 recommends memoising by passphrase, salt and parameters).
 */
export type KekDerivation = (passphrase: Buffer, salt: Buffer, params: KdfParams) => Promise<Buffer>;

/** KEK = Argon2id(passphrase, salt, m, t, p, v = 0x13, 32 bytes), through the `argon2` package. */
export const argon2idKek: KekDerivation = async (passphrase, salt, params) => {
  const violation = kdfLimitViolation(params);
  if (violation !== undefined) throw new VpbkError("E_KDF_LIMITS", violation);
  return hash(passphrase, {
    type: argon2id,
    version: 0x13,
    memoryCost: params.memoryKiB,
    timeCost: params.timeCost,
    parallelism: params.parallelism,
    salt,
    hashLength: 32,
    raw: true,
  });
};

/**
 * The passphrase's bytes: a string is encoded as UTF-8 exactly as given, with no Unicode
 * normalisation (an NFC and an NFD spelling are different passphrases); bytes are taken as they
 * are. An empty passphrase is refused.
 */
export function passphraseBytes(passphrase: string | Uint8Array): Buffer {
  const bytes =
    typeof passphrase === "string"
      ? Buffer.from(passphrase, "utf8")
      : Buffer.from(passphrase.buffer, passphrase.byteOffset, passphrase.byteLength);
  if (bytes.length === 0) throw new VpbkError("E_USAGE", "the backup passphrase is empty");
  return bytes;
}
