import { raceAbort } from "./abort.js";
import { apiError, unexpectedResponse } from "./api-error.js";
import { CsrfTokens } from "./csrf.js";
import { VellumApiError, VellumNetworkError } from "./errors.js";
import { type ClientOptions, type CookieMode, defaultCookieMode } from "./options.js";
import { joinUrl, parseBaseUrl, type Query } from "./url.js";

export interface RequestSpec {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** Path under the base URL, starting with `/`. */
  path: string;
  query?: Query;
  /** Sent as `application/json`. */
  json?: unknown;
  /** Sent as `multipart/form-data` (the runtime writes the boundary). */
  form?: FormData;
  /** A write: it carries the API key and the CSRF token, and a `csrf_failed` is retried once with a fresh token. */
  write?: boolean;
  signal?: AbortSignal | undefined;
}

export interface Reply {
  response: Response;
  /** The parsed JSON body; `undefined` for a 204. */
  body: unknown;
}

/** Sends requests to one Vellum: URLs under the base, credentials on writes, answers checked and parsed. */
export class Transport {
  readonly csrf: CsrfTokens;
  readonly #base: URL;
  readonly #apiKey: string | undefined;
  readonly #cookies: CookieMode;
  readonly #fetch: typeof globalThis.fetch;

  constructor(options: ClientOptions) {
    this.#base = parseBaseUrl(options.baseUrl);
    this.#apiKey = options.apiKey;
    this.#cookies = options.cookies ?? defaultCookieMode();
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.csrf = new CsrfTokens(() => this.#loadToken());
  }

  /** The answer of a successful request; anything else throws a `VellumApiError` or a `VellumNetworkError`. */
  async send(spec: RequestSpec): Promise<Reply> {
    if (!spec.write) return this.#exchange(spec, undefined);
    const token = await raceAbort(this.csrf.token(), spec.signal);
    try {
      return await this.#exchange(spec, token);
    } catch (error) {
      if (!(error instanceof VellumApiError) || error.code !== "csrf_failed") throw error;
      return this.#exchange(spec, await raceAbort(this.csrf.refresh(token), spec.signal));
    }
  }

  /** The parsed body of a successful request, typed by the caller. */
  async json<T>(spec: RequestSpec): Promise<T> {
    return (await this.send(spec)).body as T;
  }

  async #loadToken(): Promise<string> {
    const { response, body } = await this.#exchange({ method: "GET", path: "/api/v1/csrf" }, undefined);
    const token = (body as { token?: unknown } | null)?.token;
    if (typeof token !== "string" || token === "") throw unexpectedResponse(response, "has no CSRF token");
    return token;
  }

  async #exchange(spec: RequestSpec, token: string | undefined): Promise<Reply> {
    const url = joinUrl(this.#base, spec.path, spec.query);
    const headers = new Headers({ accept: "application/json" });
    if (spec.json !== undefined) headers.set("content-type", "application/json");
    if (token !== undefined) {
      if (this.#apiKey !== undefined) headers.set("authorization", `Bearer ${this.#apiKey}`);
      headers.set("x-csrf-token", token);
      if (this.#cookies === "manual") headers.set("cookie", `svc_csrf=${token}`);
    }
    const init: RequestInit = {
      method: spec.method,
      headers,
      body: spec.json !== undefined ? JSON.stringify(spec.json) : spec.form,
      signal: spec.signal,
    };
    if (this.#cookies === "browser") init.credentials = "include";

    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(url, init);
      text = await response.text();
    } catch (error) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      throw new VellumNetworkError(spec.method, url.href, error);
    }
    if (!response.ok) throw apiError(response, text);
    if (response.status === 204) return { response, body: undefined };
    try {
      return { response, body: JSON.parse(text) };
    } catch {
      throw unexpectedResponse(response, "is not JSON");
    }
  }
}
