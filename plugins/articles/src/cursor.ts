import { createHmac, timingSafeEqual } from "node:crypto";
import { ArticleErrors } from "./errors.js";
import { ULID_PATTERN } from "./validation.js";

const MAC_BYTES = 16;
const MAC = /^[A-Za-z0-9_-]{22}$/;

/**
 * Keyset cursors for list pages: `<last id>.<mac>`, the mac being the first 16 bytes of
 * HMAC-SHA256 over the id and the tag filter (base64url). A cursor therefore only works for the
 * listing that issued it, and anything this service did not sign is `invalid_cursor`.
 */
export interface CursorCodec {
  encode(lastId: string, tag: string | undefined): string;
  /** The id to continue after; throws `invalid_cursor` unless this service issued the cursor. */
  decode(cursor: string, tag: string | undefined): string;
}

export function createCursorCodec(secret: string): CursorCodec {
  const mac = (id: string, tag: string | undefined) =>
    createHmac("sha256", secret)
      .update(`articles-cursor/v1\n${tag ?? ""}\n${id}`)
      .digest()
      .subarray(0, MAC_BYTES)
      .toString("base64url");
  return {
    encode: (lastId, tag) => `${lastId}.${mac(lastId, tag)}`,
    decode(cursor, tag) {
      const [id = "", signature = "", ...rest] = cursor.split(".");
      if (rest.length > 0 || !ULID_PATTERN.test(id) || !MAC.test(signature)) throw ArticleErrors.invalidCursor();
      // Compared as text, so a non-canonical base64url spelling of the right bytes is refused too.
      if (!timingSafeEqual(Buffer.from(signature), Buffer.from(mac(id, tag)))) throw ArticleErrors.invalidCursor();
      return id;
    },
  };
}
