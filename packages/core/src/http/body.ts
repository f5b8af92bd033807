import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { H3Event } from "h3";
import { ApiError } from "../errors/api-error.js";

/** Largest JSON body accepted (contract §3). */
export const MAX_JSON_BYTES = 2 * 1024 * 1024;

function isJsonType(contentType: string | null): boolean {
  if (!contentType) return false;
  const type = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

const tooLarge = (limit: number) => new ApiError("payload_too_large", `The body is over the ${limit} byte limit.`);

/** The Node request behind the event, when served by `handler`/`listen`. */
function nodeRequest(event: H3Event): (IncomingMessage & { body?: unknown }) | undefined {
  return (event.runtime as { node?: { req?: IncomingMessage } } | undefined)?.node?.req;
}

/**
 * The request body as a Node stream, for a handler that streams it (an upload): the socket's own
 * stream under the Node server, the web body otherwise.
 */
export function requestBodyStream(event: H3Event): Readable {
  const node = nodeRequest(event);
  if (node) return node;
  const body = event.req.body;
  return body ? Readable.fromWeb(body as WebReadableStream) : Readable.from([]);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) && !Buffer.isBuffer(value);

/**
 * Reads a Node request body straight from its stream, without the web-stream wrapper (which costs
 * more than parsing a typical article). Stops reading as soon as the body passes `limit`.
 */
function readNodeCapped(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error: unknown, body?: Buffer) => {
      req.off("data", onData).off("end", onEnd).off("error", onFail).off("close", onClose);
      if (error) reject(error);
      else resolve(body as Buffer);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        finish(tooLarge(limit));
      } else chunks.push(chunk);
    };
    const onEnd = () => finish(undefined, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    const onFail = () => finish(new ApiError("invalid_json", "The body ended early."));
    const onClose = () => {
      if (!req.complete) onFail();
    };
    req.on("data", onData).on("end", onEnd).on("error", onFail).on("close", onClose);
  });
}

async function readWebCapped(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** Whether the request says it carries a body: a `Content-Type`, a non-zero length or a chunked one. */
export function hasBody(event: H3Event): boolean {
  const headers = event.req.headers;
  const length = headers.get("content-length");
  return (
    headers.get("content-type") !== null || (length !== null && length !== "0") || headers.has("transfer-encoding")
  );
}

/**
 * Reads a JSON object body: `Content-Type` must be JSON (415), the body at most 2 MiB (413,
 * checked while streaming so an oversize body is never buffered whole), and it must parse to a
 * plain object (400 `invalid_json`). Read once per request: the kernel reads it to validate a
 * route's `schema.body`, and the handler's own call gets the same object. On a route whose schema
 * says `bodyOptional`, a request without a body reads as `{}`.
 */
export async function readJsonBody(event: H3Event, limit = MAX_JSON_BYTES): Promise<Record<string, unknown>> {
  const read = event.context.jsonBody as Record<string, unknown> | undefined;
  if (read) return read;
  if (event.context.bodyOptional === true && !hasBody(event)) return {};
  const body = await parseJsonBody(event, limit);
  event.context.jsonBody = body;
  return body;
}

async function parseJsonBody(event: H3Event, limit: number): Promise<Record<string, unknown>> {
  if (!isJsonType(event.req.headers.get("content-type"))) {
    throw new ApiError("unsupported_media_type", "Send the body as application/json.");
  }
  const declared = event.req.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  const node = nodeRequest(event);
  if (node && (node.readableDidRead || node.readableEnded)) {
    // A host app's body parser (Express `express.json()`) ran first: use what it parsed.
    if (isPlainObject(node.body)) return node.body;
    throw new ApiError(
      "invalid_json",
      "The body was read by the host application before Vellum; mount Vellum before body parsers.",
    );
  }
  const bytes = node ? await readNodeCapped(node, limit) : await readWebCapped(event.req, limit);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new ApiError("invalid_json", "The body is not valid JSON.");
  }
  if (!isPlainObject(parsed)) throw new ApiError("invalid_json", "The body must be a JSON object.");
  return parsed;
}
