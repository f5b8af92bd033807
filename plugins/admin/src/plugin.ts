import {
  ApiError,
  definePlugin,
  type H3Event,
  mountPrefix,
  pathParam,
  type SettingDeclarations,
  setting,
  text,
  Type,
} from "@vellum/core";
import { ActionsBody, listActions } from "./actions.js";
import { loadUiBundle, type UiBundle } from "./bundle.js";
import { ADMIN_CSP, adminPage } from "./page.js";

export const ADMIN_PATH = "/admin";
export const ASSETS_PATH = "/admin/assets/:file";
export const KEY_CHECK_PATH = "/admin/key-check";
export const ACTIONS_PATH = "/admin/actions";

const HTML = { 200: { description: "The admin page", type: "text/html" } };

export interface AdminOptions {
  /** ADMIN_OFF: serve no admin UI (`/admin` and its routes answer 404). */
  off: boolean;
}

const ADMIN_SETTINGS: SettingDeclarations<AdminOptions> = {
  off: setting.boolean({
    env: "ADMIN_OFF",
    description: "true: no admin UI (`/admin` and its routes answer 404); the API is unchanged",
    default: false,
  }),
};

/**
 * The administration UI: `GET /admin` serves a page that loads one script and one stylesheet
 * (`GET /admin/assets/<name>`, content-hashed, kept by browsers for a year), a single-page app
 * that edits articles and media through the public API and shows the service's health. It signs
 * in with the API key, checked by `GET /admin/key-check`, and keeps it in the tab's session
 * storage only; `GET /admin/actions` lists the operator actions the installed plugins declare.
 * `ADMIN_OFF=true` leaves all of it out. The plugin has no tables.
 */
export const admin = definePlugin<AdminOptions>({
  name: "admin",
  settings: ADMIN_SETTINGS,
  async setup(ctx) {
    if (ctx.options.off) {
      ctx.logger.info("the admin UI is off (ADMIN_OFF)");
      return;
    }
    const loaded = await loadUiBundle();
    const missing = "missing" in loaded ? loaded.missing : undefined;
    if (missing) ctx.logger.warn(`the admin UI is not built (run npm run build): ${missing}`);
    const requireBundle = (): UiBundle => {
      if ("missing" in loaded)
        throw new ApiError("service_unavailable", "The admin UI is not built; run npm run build.");
      return loaded;
    };
    const pages = new Map<string, string>();
    const page = (event: H3Event) => {
      const bundle = requireBundle();
      const prefix = mountPrefix(event);
      let html = pages.get(prefix);
      if (html === undefined) pages.set(prefix, (html = adminPage(prefix, bundle)));
      return text(html, {
        headers: {
          "content-type": "text/html; charset=utf-8",
          "content-security-policy": ADMIN_CSP,
          "cache-control": "no-cache",
        },
      });
    };

    ctx.router.get(ADMIN_PATH, page, {
      csrfCookie: true,
      schema: { summary: "The administration UI", tags: ["admin"], response: HTML },
    });
    ctx.router.get(
      ASSETS_PATH,
      (event) => {
        const file = requireBundle().files.get(pathParam(event, "file"));
        if (!file) throw new ApiError("not_found", "No such file of the admin UI.");
        // The icon is an SVG of a few hundred bytes: gzip would not pay for itself.
        const gzip = file.type !== "image/svg+xml" && /\bgzip\b/.test(event.req.headers.get("accept-encoding") ?? "");
        const headers: Record<string, string> = {
          "content-type": file.type,
          "cache-control": "public, max-age=31536000, immutable",
          vary: "accept-encoding",
        };
        if (gzip) headers["content-encoding"] = "gzip";
        return new Response(gzip ? file.gzip : file.body, { headers });
      },
      {
        schema: {
          summary: "A script, stylesheet or icon of the administration UI",
          tags: ["admin"],
          params: Type.Object({ file: Type.String({ description: "The file's name, as the admin page names it" }) }),
          response: { 200: { description: "The file (gzipped when the client accepts it)", type: "text/javascript" } },
        },
      },
    );
    ctx.router.get(KEY_CHECK_PATH, () => ({ valid: true }), {
      auth: "key",
      csrf: false,
      schema: {
        summary: "Checks the API key, as the admin UI's sign-in does; a wrong key counts toward the lockout",
        tags: ["admin"],
        response: { 200: { description: "The key is right", body: Type.Object({ valid: Type.Literal(true) }) } },
      },
    });
    ctx.router.get(ACTIONS_PATH, () => ({ actions: listActions(ctx.kernel.routes(), ctx.features) }), {
      auth: "key",
      csrf: false,
      schema: {
        summary: "The operator actions the installed plugins offer (route meta `action`), for the admin UI's buttons",
        tags: ["admin"],
        response: { 200: { description: "The actions", body: ActionsBody } },
      },
    });
  },
});
