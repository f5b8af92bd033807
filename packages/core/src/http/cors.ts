/** CORS by config (`SERVICE_CORS_ORIGINS`): exact origins, or `*` for any origin without credentials. */
export interface CorsPolicy {
  /** Headers to add for this request's `Origin`, or undefined when the origin is not allowed. */
  headersFor(origin: string | null): Record<string, string> | undefined;
  /** A complete preflight response for an allowed origin, else undefined. */
  preflight(request: Request): Response | undefined;
}

const ALLOWED_HEADERS = "authorization, content-type, x-csrf-token, x-request-id, x-api-key, if-none-match";
const EXPOSED_HEADERS =
  "x-request-id, etag, location, retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset";

export function createCorsPolicy(origins: readonly string[]): CorsPolicy {
  const any = origins.includes("*");
  const allowed = new Set(origins.map((o) => o.replace(/\/$/, "")));
  const headersFor = (origin: string | null) => {
    if (!origin || (!any && !allowed.has(origin))) return undefined;
    const headers: Record<string, string> = {
      "access-control-allow-origin": any ? "*" : origin,
      "access-control-expose-headers": EXPOSED_HEADERS,
    };
    if (!any) {
      headers["access-control-allow-credentials"] = "true";
      headers.vary = "Origin";
    }
    return headers;
  };
  return {
    headersFor,
    preflight(request) {
      if (request.method !== "OPTIONS" || !request.headers.get("access-control-request-method")) return undefined;
      const base = headersFor(request.headers.get("origin"));
      if (!base) return undefined;
      return new Response(null, {
        status: 204,
        headers: {
          ...base,
          "access-control-allow-methods": "GET, HEAD, POST, PUT, PATCH, DELETE",
          "access-control-allow-headers": ALLOWED_HEADERS,
          "access-control-max-age": "600",
        },
      });
    },
  };
}
