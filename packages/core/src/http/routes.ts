import type { H3, H3Event } from "h3";
import { addRoute, createRouter, findRoute } from "rou3";
import { CoreErrors } from "../errors/vellum-error.js";
import type { RateLimitRule } from "../security/rate-limit.js";
import type { RouteSchema } from "./route-schema.js";
import type { Shortcut, Shortcuts } from "./shortcuts.js";
import { type ValidatingHandler, validatingHandler } from "./validate.js";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
export type RouteHandler = (event: H3Event) => unknown;

/**
 * An operator's action that an admin UI may offer as a button: a keyed route without path
 * parameters that needs no body.
 */
export interface OperatorAction {
  /** What it does, in a few words: `Rebuild the index`. */
  label: string;
  /** The name of the health component it acts on, for the UI to show it beside. */
  component?: string;
  /** The question to ask first, for an action that removes or changes data. */
  confirm?: string;
}

/** Per-route declarations the kernel (and other plugins, e.g. cache) read. */
export interface RouteMeta {
  /** `key`: the API key is required. Default: `key` for POST/PUT/PATCH/DELETE, `none` for GET. */
  auth?: "key" | "none";
  /** Double-submit CSRF check; default on whenever `auth` is `key`. */
  csrf?: boolean;
  /** Also accept the key in `X-API-Key` (runbooks use it for `/admin/reindex`). */
  apiKeyHeader?: boolean;
  rateLimit?: RateLimitRule;
  /** Sends `Deprecation` and `Sunset` headers (contract §10). */
  deprecated?: { sunset: string | Date; link?: string };
  /** Exists only while this `SERVICE_FEATURES` flag is on; 404 otherwise. */
  feature?: string;
  /**
   * Hands a fresh `svc_csrf` cookie to a GET without a valid one (contract §4: `GET /api/v1/csrf`,
   * `/health`, HTML pages). Default off: cacheable reads never carry `Set-Cookie`.
   */
  csrfCookie?: boolean;
  /** Answers before `ready()` and while shutting down (health probes). */
  probe?: boolean;
  /**
   * Makes the route's GET responses cacheable (a response cache reads this): the cache tags of the
   * response to `event`, naming what it shows, so that a change purges exactly the responses that
   * showed it. The route's owner names the same tags in the events of its changes.
   */
  cacheTags?: (event: H3Event) => string[];
  /**
   * What the route accepts and answers: the kernel validates its query and JSON body before the
   * handler runs, and the OpenAPI document is generated from it.
   */
  schema?: RouteSchema;
  /** Offer the route to operators as an action (an admin UI lists them); only for keyed routes. */
  action?: OperatorAction;
  [key: string]: unknown;
}

export interface RouteRecord {
  method: HttpMethod;
  path: string;
  plugin: string;
  meta: RouteMeta;
}

/** The route a request matched: its pattern and its meta (with the plugin that registered it). */
export interface MatchedRoute {
  route: string;
  meta?: RouteMeta & { plugin?: string };
}

/** The route `event` matched, or undefined before routing and for unmatched paths. */
export const matchedRoute = (event: H3Event) => event.context.matchedRoute as MatchedRoute | undefined;

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export function effectiveAuth(method: string, meta: RouteMeta): { key: boolean; csrf: boolean } {
  const key = (meta.auth ?? (WRITE_METHODS.has(method) ? "key" : "none")) === "key";
  return { key, csrf: key && meta.csrf !== false };
}

/**
 * Every route in one table: registers into the h3 app and keeps a method-less index so an
 * unmatched request can be told apart as 405 (path exists, other method) or 404.
 */
export class RouteTable {
  readonly #app: H3;
  readonly #byPath = createRouter<Map<string, RouteRecord>>();
  readonly #records: RouteRecord[] = [];
  readonly #validating: ValidatingHandler[] = [];

  constructor(app: H3) {
    this.#app = app;
  }

  add(plugin: string, method: HttpMethod, path: string, handler: RouteHandler, meta: RouteMeta = {}): void {
    const found = findRoute(this.#byPath, "", path)?.data;
    const shared = found && [...found.values()][0]?.path === path ? found : undefined;
    const methods = shared ?? new Map<string, RouteRecord>();
    const clash = methods.get(method);
    if (clash) throw CoreErrors.routeDuplicate([method, path, clash.plugin, plugin], { plugin });
    const record: RouteRecord = { method, path, plugin, meta };
    methods.set(method, record);
    if (!shared) addRoute(this.#byPath, "", path, methods);
    this.#records.push(record);
    const checked: ValidatingHandler = meta.schema ? validatingHandler(meta.schema, handler) : handler;
    if (checked.prepare) this.#validating.push(checked);
    this.#app.on(method, path, checked, { meta: { ...meta, plugin } });
  }

  /** Methods allowed on a path, or an empty list when no route has that path. */
  allowed(pathname: string): string[] {
    const match = findRoute(this.#byPath, "", pathname);
    if (!match?.data) return [];
    const methods = [...match.data.keys()];
    if (methods.includes("GET")) methods.push("HEAD");
    return methods;
  }

  /** Compiles every route's validators (at ready, so no first request waits for it; a bad schema fails the start). */
  async prepareValidators(): Promise<void> {
    await Promise.all(this.#validating.map((handler) => handler.prepare?.()));
  }

  list(): readonly RouteRecord[] {
    return this.#records;
  }
}

export interface PluginRouter {
  get(path: string, handler: RouteHandler, meta?: RouteMeta): void;
  post(path: string, handler: RouteHandler, meta?: RouteMeta): void;
  put(path: string, handler: RouteHandler, meta?: RouteMeta): void;
  patch(path: string, handler: RouteHandler, meta?: RouteMeta): void;
  delete(path: string, handler: RouteHandler, meta?: RouteMeta): void;
  /** Answers GETs and HEADs before routing with prepared responses (see `Shortcut`). */
  shortcut(fn: Shortcut): void;
}

export function createPluginRouter(table: RouteTable, shortcuts: Shortcuts, plugin: string): PluginRouter {
  const on = (method: HttpMethod) => (path: string, handler: RouteHandler, meta?: RouteMeta) =>
    table.add(plugin, method, path, handler, meta);
  return {
    get: on("GET"),
    post: on("POST"),
    put: on("PUT"),
    patch: on("PATCH"),
    delete: on("DELETE"),
    shortcut: (fn) => shortcuts.add(plugin, fn),
  };
}
