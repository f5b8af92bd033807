import type { Socket } from "node:net";
import { resolveRequestId } from "../http/request-id.js";
import { SECURITY_HEADERS } from "../http/security-headers.js";

/**
 * Answers a request Node's HTTP parser rejects before any handler runs (a request head over
 * Node's limit, raw bytes in the request line) the way every other error is answered: `400
 * invalid_parameter` in the contract's envelope, with a request id and the security headers,
 * instead of Node's bare status line. The connection closes after it.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const id = resolveRequestId(null);
  const body = JSON.stringify({
    error: {
      code: "invalid_parameter",
      message: "The request could not be read: its head is malformed or too large.",
      request_id: id,
      docs: "/docs/api/errors#invalid_parameter",
    },
  });
  const headers = {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(body)),
    ...SECURITY_HEADERS,
    "x-request-id": id,
    connection: "close",
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  socket.end(`HTTP/1.1 400 Bad Request\r\n${head}\r\n${body}`);
}
