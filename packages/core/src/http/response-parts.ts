import { STATUS_CODES } from "node:http";
import { FastResponse } from "srvx/node";

/** A response taken apart: what `http:response` subscribers that rewrite a response work with. */
export interface ResponseParts {
  status: number;
  /** `[name, value, name, value, …]`, names in lower case. */
  headers: string[];
  body: Uint8Array;
}

interface NodeParts {
  status: number;
  headers: string[];
  body?: unknown;
}

/** srvx's `FastResponse` hands its parts to the Node adapter without building `Headers` or a stream. */
type WithNodeParts = Response & { _toNodeResponse?: () => NodeParts };

async function bytesOf(body: unknown): Promise<Uint8Array> {
  if (body === undefined || body === null) return new Uint8Array(0);
  if (typeof body === "string") return Buffer.from(body);
  if (body instanceof Uint8Array) return body;
  return new Uint8Array(await new Response(body as BodyInit).arrayBuffer());
}

/**
 * Reads a response whole, consuming it. The kernel's own responses (a handler's JSON or `Reply`)
 * come apart without a web stream; any other `Response` is read through the Fetch API.
 */
export async function readResponse(response: Response): Promise<ResponseParts> {
  const own = (response as WithNodeParts)._toNodeResponse;
  if (own) {
    const parts = own.call(response);
    return { status: parts.status, headers: parts.headers, body: await bytesOf(parts.body) };
  }
  const headers: string[] = [];
  response.headers.forEach((value, name) => headers.push(name, value));
  return { status: response.status, headers, body: new Uint8Array(await response.arrayBuffer()) };
}

/** A response from its parts, which the Node adapter writes as they are. */
export function responseFrom(parts: ResponseParts): Response {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i < parts.headers.length; i += 2)
    pairs.push([parts.headers[i] as string, parts.headers[i + 1] as string]);
  const body = parts.status === 304 || parts.status === 204 ? null : parts.body;
  const init = { status: parts.status, statusText: STATUS_CODES[parts.status], headers: pairs };
  return new FastResponse(body as BodyInit | null, init);
}
