import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, timingSafeEqual } from "node:crypto";

/**
 * The key schedule of backup-format.md §2.2, apart from the KDF (kdf.ts):
 *
 * ```
 * wrapped  = AES-256-GCM(key=KEK, nonce=wrap_nonce, pt=DK, aad=header[0..96))
 * K_hdr    = HKDF-SHA-256(ikm=DK, salt=stream_salt, info="vpbk1 header",  L=32)
 * K_pay    = HKDF-SHA-256(ikm=DK, salt=stream_salt, info="vpbk1 payload", L=32)
 * header_mac = HMAC-SHA-256(K_hdr, header[0..156))
 * H        = SHA-256(header[0..188))
 * ```
 */

/** Bytes of a key (KEK, DK, K_hdr, K_pay) and of the header MAC and H. */
export const KEY_BYTES = 32;
/** Bytes of a GCM nonce. */
export const NONCE_BYTES = 12;
/** Bytes of a GCM tag: every open passes `authTagLength: 16`, so a shorter tag is refused. */
export const TAG_BYTES = 16;

/** The keys an unlocked generation is read or written with. */
export interface VpbkKeys {
  /** The generation's data key (DK). Secret: it opens the generation without the passphrase. */
  dataKey: Buffer;
  /** K_hdr, the header MAC key. */
  headerKey: Buffer;
  /** K_pay, the frame key. */
  payloadKey: Buffer;
  /** H = SHA-256 of the 188-byte header, bound into every frame's AAD. */
  headerHash: Buffer;
}

/** Wraps DK under the KEK: 32 bytes of ciphertext followed by the 16-byte tag. */
export function wrapDataKey(kek: Buffer, nonce: Buffer, dataKey: Buffer, aad: Buffer): Buffer {
  const cipher = createCipheriv("aes-256-gcm", kek, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const sealed = Buffer.concat([cipher.update(dataKey), cipher.final()]);
  return Buffer.concat([sealed, cipher.getAuthTag()]);
}

/** Opens the wrapped DK, or returns undefined when the tag does not verify (wrong KEK or damage). */
export function unwrapDataKey(kek: Buffer, nonce: Buffer, wrapped: Buffer, aad: Buffer): Buffer | undefined {
  if (wrapped.length !== KEY_BYTES + TAG_BYTES) return undefined;
  const decipher = createDecipheriv("aes-256-gcm", kek, nonce, { authTagLength: TAG_BYTES });
  decipher.setAAD(aad);
  decipher.setAuthTag(wrapped.subarray(KEY_BYTES));
  const dataKey = decipher.update(wrapped.subarray(0, KEY_BYTES));
  try {
    decipher.final();
  } catch {
    dataKey.fill(0);
    return undefined;
  }
  return dataKey;
}

/** K_hdr and K_pay from DK and the header's `stream_salt`. */
export function deriveSubkeys(dataKey: Buffer, streamSalt: Buffer): { headerKey: Buffer; payloadKey: Buffer } {
  return {
    headerKey: Buffer.from(hkdfSync("sha256", dataKey, streamSalt, "vpbk1 header", KEY_BYTES)),
    payloadKey: Buffer.from(hkdfSync("sha256", dataKey, streamSalt, "vpbk1 payload", KEY_BYTES)),
  };
}

/** HMAC-SHA-256 under K_hdr of the header's first 156 bytes. */
export function headerMac(headerKey: Buffer, macInput: Buffer): Buffer {
  return createHmac("sha256", headerKey).update(macInput).digest();
}

/** Compares two MACs in constant time. */
export function macEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** SHA-256 of `data`. */
export function sha256(data: Uint8Array): Buffer {
  return createHash("sha256").update(data).digest();
}
