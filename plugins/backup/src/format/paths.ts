import { VpbkError } from "./errors.js";

/**
 * The path rules of the record stream (backup-format.md §2.5), checked when writing and when
 * reading: even an archive made with the key (a bug, an insider) cannot name a path outside the
 * data dir's known folders (property R1).
 */

/**
 * The first segments a path may have: the data dir's folders, defined in code. The format's list
 * plus `storage`, where the kernel keeps plugins' storage namespaces (`ctx.storage`).
 */
export const TOP_LEVEL_ALLOWLIST: readonly string[] = Object.freeze([
  "db",
  "media",
  "mailboxes",
  "settings",
  "pgp",
  "storage",
  ".vellum",
]);
/** The one SQLITE_DB record's path. */
export const SQLITE_DB_PATH = "db/vellum.sqlite";
/** Most bytes of a path. */
export const MAX_PATH_BYTES = 1024;
/** Most bytes of one segment. */
export const MAX_SEGMENT_BYTES = 255;

const SLASH = 0x2f;
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Why `bytes` is not an acceptable path, or undefined when it is: valid UTF-8 in NFC, 1–1024
 * bytes, `/`-separated segments of 1–255 bytes, no empty, `.` or `..` segment (so no leading,
 * trailing or doubled `/`), no `\`, NUL, C0 control, DEL or `:`, and a first segment from
 * {@link TOP_LEVEL_ALLOWLIST}.
 */
export function pathViolation(bytes: Uint8Array): string | undefined {
  if (bytes.length < 1 || bytes.length > MAX_PATH_BYTES) return `a path has 1 to ${MAX_PATH_BYTES} bytes`;
  for (const byte of bytes) {
    if (byte < 0x20 || byte === 0x7f) return "a path has no NUL, control character or DEL";
    if (byte === 0x5c) return "a path has no backslash";
    if (byte === 0x3a) return "a path has no colon";
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return "a path is valid UTF-8";
  }
  if (text.normalize("NFC") !== text) return "a path is in Unicode NFC";
  let start = 0;
  let first = true;
  for (let i = 0; i <= bytes.length; i += 1) {
    if (i < bytes.length && bytes[i] !== SLASH) continue;
    const length = i - start;
    if (length === 0) return "a path has no empty segment (nor a leading, trailing or doubled /)";
    if (length > MAX_SEGMENT_BYTES) return `a path segment has at most ${MAX_SEGMENT_BYTES} bytes`;
    if (bytes[start] === 0x2e && (length === 1 || (length === 2 && bytes[start + 1] === 0x2e))) {
      return "a path has no . or .. segment";
    }
    if (first) {
      const top = text.slice(0, text.indexOf("/") === -1 ? text.length : text.indexOf("/"));
      if (!TOP_LEVEL_ALLOWLIST.includes(top)) return `a path starts with one of ${TOP_LEVEL_ALLOWLIST.join(", ")}`;
      first = false;
    }
    start = i + 1;
  }
  return undefined;
}

/**
 * The UTF-8 bytes of a path given as a string; a string that is not well-formed Unicode (a lone
 * surrogate) has no exact UTF-8 form and is refused (`E_RECORD_PATH`).
 */
export function pathBytes(path: string): Buffer {
  const bytes = Buffer.from(path, "utf8");
  if (bytes.toString("utf8") !== path) {
    throw new VpbkError("E_RECORD_PATH", "a path is valid Unicode (it has a lone surrogate)", { path });
  }
  return bytes;
}

/** A path for messages: decoded leniently, so invalid bytes show as U+FFFD. */
export function printablePath(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
}

/**
 * The key two names collide under on a case-insensitive filesystem: the name upper-cased, then
 * lower-cased (so both simple and full case mappings count, `ß` and `SS` included).
 */
export function caseFoldKey(name: string): string {
  return name.toUpperCase().toLowerCase().normalize("NFC");
}

interface OpenDir {
  path: Buffer;
  /** Case-fold keys of the children seen so far. */
  children: Set<string>;
}

/**
 * The order rules: paths strictly ascending by bytes (no duplicates, parents first), every
 * proper prefix of a path declared as a DIR, and no two siblings equal once case-folded.
 *
 * Memory stays bounded by the path depth and the largest directory, not the archive: in byte
 * order the descendants of a directory `d` are exactly the following paths that start with `d/`,
 * so only the DIRs that are a string prefix of the latest path can still get children. They form
 * a chain, kept as a stack with each one's case-folded child names.
 */
export class PathOrder {
  #previous: Buffer | undefined;
  readonly #stack: OpenDir[] = [];
  readonly #top = new Set<string>();

  /**
   * Checks `path` (already valid by {@link pathViolation}) as the next path and, only if it passes,
   * takes it (`E_RECORD_ORDER` or `E_RECORD_PARENT` otherwise).
   */
  admit(path: Buffer, isDir: boolean, record?: number): void {
    const details = { path: printablePath(path), ...(record === undefined ? {} : { record }) };
    if (this.#previous !== undefined) {
      const order = Buffer.compare(path, this.#previous);
      if (order <= 0) {
        const what = order === 0 ? "a duplicate path" : `not after ${JSON.stringify(printablePath(this.#previous))}`;
        throw new VpbkError("E_RECORD_ORDER", `paths are strictly ascending by bytes: ${what}`, details);
      }
    }
    let keep = this.#stack.length;
    while (keep > 0 && !startsWith(path, (this.#stack[keep - 1] as OpenDir).path)) keep -= 1;
    const slash = path.lastIndexOf(SLASH);
    let siblings = this.#top;
    if (slash !== -1) {
      const parent = path.subarray(0, slash);
      let found: OpenDir | undefined;
      for (let i = keep - 1; i >= 0 && found === undefined; i -= 1) {
        if ((this.#stack[i] as OpenDir).path.equals(parent)) found = this.#stack[i];
      }
      if (found === undefined) {
        throw new VpbkError(
          "E_RECORD_PARENT",
          `the parent ${JSON.stringify(printablePath(parent))} is not declared as a DIR before it`,
          details,
        );
      }
      siblings = found.children;
    }
    const key = caseFoldKey(path.subarray(slash + 1).toString("utf8"));
    if (siblings.has(key)) {
      throw new VpbkError("E_RECORD_ORDER", "a sibling with the same name up to case precedes it", details);
    }
    this.#stack.length = keep;
    siblings.add(key);
    if (isDir) this.#stack.push({ path, children: new Set() });
    this.#previous = path;
  }
}

/** Whether `prefix` is a proper string prefix of `path`. */
function startsWith(path: Buffer, prefix: Buffer): boolean {
  return path.length > prefix.length && path.subarray(0, prefix.length).equals(prefix);
}
