import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { ApiError, type H3Event } from "@vellum/core";
import type { MediaStore } from "./store.js";
import { STORED_NAME } from "./store.js";

const TYPE_OF: Record<string, string> = { webp: "image/webp", pdf: "application/pdf" };

/**
 * `bytes=a-b`, `bytes=a-` or `bytes=-n` against `size`: the inclusive range, or undefined to send
 * the whole file. RFC 9110 lets a server ignore a Range it does not take, so several ranges, other
 * units, nonsense and ranges outside the file all get the whole file (200), never an error.
 */
export function parseRange(header: string | null, size: number): { start: number; end: number } | undefined {
  if (header === null) return undefined;
  const match = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return undefined;
  const [first, last] = [match[1] as string, match[2] as string];
  if (first === "") {
    const suffix = Number(last);
    return suffix === 0 ? undefined : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
  return start >= size || end < start ? undefined : { start, end };
}

/**
 * `GET /media/<file>` (and HEAD): streamed from the store, never read whole. The file never
 * changes under its name, so it is cached for a year (`immutable`) and its ETag is its name.
 * One range per request (206). A PDF is sent as an attachment in a
 * sandbox so a browser never runs what it may carry.
 */
export async function serveMedia(event: H3Event, store: MediaStore, file: string): Promise<Response> {
  const size = STORED_NAME.test(file) ? await store.size(file) : undefined;
  if (size === undefined) throw new ApiError("not_found", "No such media file.");
  const extension = file.slice(file.lastIndexOf(".") + 1);
  const etag = `"${file}"`;
  const headers = new Headers({
    "content-type": TYPE_OF[extension] ?? "application/octet-stream",
    "cache-control": "public, max-age=31536000, immutable",
    "x-content-type-options": "nosniff",
    "accept-ranges": "bytes",
    etag,
  });
  if (extension === "pdf") {
    headers.set("content-disposition", "attachment");
    headers.set("content-security-policy", "sandbox");
  }
  const ifNoneMatch = event.req.headers.get("if-none-match");
  const matches = (tag: string) => tag === "*" || tag.replace(/^W\//, "") === etag;
  if (ifNoneMatch !== null && ifNoneMatch.split(",").some((tag) => matches(tag.trim()))) {
    return new Response(null, { status: 304, headers });
  }
  const ifRange = event.req.headers.get("if-range");
  const range = ifRange === null || ifRange === etag ? parseRange(event.req.headers.get("range"), size) : undefined;
  const status = range ? 206 : 200;
  const length = range ? range.end - range.start + 1 : size;
  headers.set("content-length", String(length));
  if (range) headers.set("content-range", `bytes ${range.start}-${range.end}/${size}`);
  if (event.req.method === "HEAD") return new Response(null, { status, headers });
  const body = Readable.toWeb(store.read(file, range)) as WebReadableStream<Uint8Array>;
  return new Response(body as ReadableStream<Uint8Array>, { status, headers });
}
