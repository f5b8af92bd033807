import type { IncomingMessage } from "node:http";
import type { H3Event } from "h3";

/** The path of a request target (`/cms/a?x=1` → `/cms/a`). */
const pathOf = (target: string) => target.split("?")[0] ?? "";

/** Prefixes that hosts calling `vellum.fetch` named for their requests. */
const assigned = new WeakMap<Request, string>();

/** Records the prefix a host stripped from `request` before handing it to `vellum.fetch`. */
export function assignMountPrefix(request: Request, prefix: string): void {
  assigned.set(request, prefix);
}

/**
 * The prefix a Node host stripped before handing the request to Vellum: Express's `baseUrl`, or
 * what Connect-style routers leave in `originalUrl` in front of `url`.
 */
function nodePrefix(event: H3Event): string | undefined {
  const req = (event.runtime as { node?: { req?: IncomingMessage & { baseUrl?: string; originalUrl?: string } } })?.node
    ?.req;
  if (!req) return undefined;
  if (typeof req.baseUrl === "string") return req.baseUrl;
  if (typeof req.originalUrl !== "string" || req.originalUrl === req.url) return undefined;
  const original = pathOf(req.originalUrl);
  const own = pathOf(req.url ?? "/").replace(/\/+$/, "");
  return original.endsWith(own) ? original.slice(0, original.length - own.length) : undefined;
}

/**
 * The path Vellum is mounted under, as clients see it (`/cms`; empty at the root): the prefix a
 * host named in `vellum.fetch(request, {mountPrefix})` or a Node host (Express, Connect) stripped,
 * else the path of `baseUrl` (`SERVICE_BASE_URL`, for a proxy that strips it). Every link the
 * service makes starts with it.
 */
export function mountPrefix(event: H3Event): string {
  const known = event.context.mountPrefix as string | undefined;
  if (known !== undefined) return known;
  const told = assigned.get(event.req) ?? nodePrefix(event);
  const prefix = (told ?? (event.context.basePath as string | undefined) ?? "").replace(/\/+$/, "");
  event.context.mountPrefix = prefix;
  return prefix;
}

/** `path` (from Vellum's root) as the client must request it: `/api/v1/x` → `/cms/api/v1/x`. */
export const publicPath = (event: H3Event, path: string) => `${mountPrefix(event)}${path}`;

/** The path of a configured base URL, the prefix for hosts that do not tell (`https://a.b/cms/` → `/cms`). */
export function basePathOf(baseUrl: string | undefined): string {
  if (!baseUrl) return "";
  try {
    return new URL(baseUrl).pathname.replace(/\/+$/, "");
  } catch {
    return "";
  }
}
