import { type ClientRequest, type IncomingMessage, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Receiver } from "./receivers.js";

/**
 * Why an attempt failed, in words that name the receiver by host only. `status` is the receiver's
 * answer when there was one; `retryAfterMs` what its `Retry-After` asked for.
 */
export class DeliveryFailure extends Error {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, status?: number, retryAfterMs?: number) {
    super(message);
    this.name = "DeliveryFailure";
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}

const STATUS_MESSAGE = /^HTTP (\d{3}) /;

/** The receiver's answer recorded in a failure's message (the job's `last_error`), if it answered. */
export function statusOfFailure(message: string | null): number | undefined {
  const match = message === null ? null : STATUS_MESSAGE.exec(message);
  return match ? Number(match[1]) : undefined;
}

/** Milliseconds a `Retry-After` value (seconds, or an HTTP date) asks to wait, or undefined. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export interface SendRequest {
  receiver: Receiver;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** Cuts the attempt short (the instance is shutting down). */
  signal?: AbortSignal;
}

interface Answer {
  status: number;
  response: IncomingMessage;
}

/** A kept-alive connection the receiver had closed as it was reused: the request never reached it. */
class StaleConnection extends Error {}

/** One request; `deadline` (epoch ms) bounds it, so a resend shares the attempt's time limit. */
function post({ receiver, body, headers, timeoutMs, signal }: SendRequest, deadline: number): Promise<Answer> {
  const url = new URL(receiver.url);
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<Answer>((resolve, reject) => {
    const req: ClientRequest = send(url, {
      method: "POST",
      agent: receiver.agent,
      // Assigned, not spread: in Node 20's V8 a spread followed by a key gives the object a hidden
      // class of its own every time (docs/benchmarks.md).
      headers: Object.assign({}, headers, { "content-length": String(Buffer.byteLength(body)) }),
    });
    const timer = setTimeout(
      () => {
        req.destroy(new DeliveryFailure(`timed out after ${timeoutMs} ms at ${receiver.name}`));
      },
      Math.max(0, deadline - Date.now()),
    );
    const abort = () => req.destroy(new DeliveryFailure(`interrupted by shutdown at ${receiver.name}`));
    if (signal?.aborted) abort();
    signal?.addEventListener("abort", abort, { once: true });
    const fail = (error: Error) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", abort);
      const code = (error as NodeJS.ErrnoException).code;
      const stale = req.reusedSocket && (code === "ECONNRESET" || code === "EPIPE");
      reject(stale ? new StaleConnection(error.message) : error);
    };
    req.on("error", fail);
    req.on("response", (response) => {
      // Drain the answer so the connection can carry the next delivery; the body is not kept.
      response.on("error", fail);
      response.on("end", () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", abort);
        resolve({ status: response.statusCode ?? 0, response });
      });
      response.resume();
    });
    req.end(body);
  });
}

/**
 * One POST to a receiver over its keep-alive connection, answer read to the end within the
 * timeout. Redirects are never followed: a 3xx is a failure like any other non-2xx. A kept-alive
 * connection the receiver closed as it was reused is retried once on a fresh one, since the
 * request never reached it. Resolves with the status of a 2xx; throws `DeliveryFailure` otherwise.
 */
export async function sendDelivery(request: SendRequest): Promise<number> {
  const deadline = Date.now() + request.timeoutMs;
  let answer: Answer;
  try {
    answer = await post(request, deadline).catch(async (error: unknown) => {
      if (!(error instanceof StaleConnection)) throw error;
      return post(request, deadline);
    });
  } catch (error) {
    if (error instanceof DeliveryFailure) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new DeliveryFailure(`${code} at ${request.receiver.name}`);
  }
  const { status, response } = answer;
  if (status >= 200 && status <= 299) return status;
  const header = response.headers["retry-after"];
  const text = `HTTP ${status} from ${request.receiver.name}`;
  throw new DeliveryFailure(
    status >= 300 && status <= 399 ? `${text} (redirects are not followed)` : text,
    status,
    retryAfterMs(header),
  );
}
