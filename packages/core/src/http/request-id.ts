import type { H3Event } from "h3";
import { randomToken } from "../internal/random-pool.js";

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Keeps a safe incoming `X-Request-Id`; otherwise makes a new one. */
export function resolveRequestId(incoming: string | null): string {
  if (incoming && SAFE_REQUEST_ID.test(incoming)) return incoming;
  return randomToken(12);
}

export function requestId(event: H3Event): string {
  return (event.context.requestId as string | undefined) ?? "unknown";
}
