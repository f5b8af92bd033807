import { getCookie } from "h3";
import { Type } from "typebox";
import { json } from "../http/json.js";
import type { RouteTable } from "../http/routes.js";
import { CSRF_COOKIE, type CsrfTokens } from "./csrf.js";

/**
 * `GET /api/v1/csrf` (contract §4): `{token}` with `no-store`, the valid `svc_csrf` the request
 * carries, or a new token that the kernel also sets as the cookie. Clients send it back in
 * `X-CSRF-Token` with the cookie on every write.
 */
export function registerCsrfRoute(routes: RouteTable, tokens: () => CsrfTokens | undefined): void {
  routes.add(
    "core",
    "GET",
    "/api/v1/csrf",
    (event) => {
      const issuer = tokens();
      const carried = getCookie(event, CSRF_COOKIE);
      const token = issuer && !issuer.verify(carried) ? issuer.issue() : (carried ?? "");
      event.context.csrfToken = token;
      return json({ token }, { headers: { "cache-control": "no-store" } });
    },
    {
      csrfCookie: true,
      schema: {
        summary: "The CSRF token to send back in X-CSRF-Token with the svc_csrf cookie",
        tags: ["security"],
        response: {
          200: {
            description: "The token; a new one is also set as the `svc_csrf` cookie when the request had no valid one",
            body: Type.Object({ token: Type.String() }),
          },
        },
      },
    },
  );
}
