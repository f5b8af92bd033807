import { createClient, VellumApiError, VellumError, VellumNetworkError, type VellumClient } from "@vellum/client";
import type { ListedAction } from "../src/actions.js";
import { signedInKey } from "./session.js";

/** Where Vellum is mounted (`/cms`, or empty), as the page says; every address starts with it. */
const base = document.getElementById("app")?.dataset.base ?? "";
const baseUrl = new URL(`${base}/`, location.origin);

/** Reads revalidate what the browser cached (`ETag`), so a list shows a write the moment it is applied. */
const revalidating: typeof fetch = (input, init) => fetch(input, { ...init, cache: "no-cache" });

let current: { key: string | undefined; client: VellumClient } | undefined;

/** The typed client of this instance, writing with the signed-in key (it keeps its CSRF token). */
export function client(): VellumClient {
  const key = signedInKey();
  const kept = current;
  if (kept && kept.key === key) return kept.client;
  const made = createClient({ baseUrl, apiKey: key, fetch: revalidating });
  current = { key, client: made };
  return made;
}

/** A path of this instance as a URL (`/admin/actions` → `<origin><prefix>/admin/actions`). */
const urlOf = (path: string) => new URL(path.replace(/^\//, ""), baseUrl);

/**
 * A keyed request to an operator route the client does not cover (`/admin/…`): its JSON answer,
 * or the answer's error (`unauthorized`, `locked_out`, …) thrown as the client's `VellumApiError`.
 */
async function keyed(method: string, path: string, apiKey: string, csrf = false): Promise<unknown> {
  const url = urlOf(path);
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, accept: "application/json" };
  if (csrf) headers["x-csrf-token"] = await client().csrf.token();
  let res: Response;
  try {
    res = await fetch(url, { method, headers, credentials: "same-origin" });
  } catch (cause) {
    throw new VellumNetworkError(method, url.href, cause);
  }
  const body = (await res.json().catch(() => undefined)) as
    { error?: { code?: string; message?: string; request_id?: string } } | undefined;
  if (res.ok) return body;
  const error = body?.error;
  throw new VellumApiError({
    status: res.status,
    code: error?.code ?? "unexpected_response",
    message: error?.message ?? `The server answered ${res.status}.`,
    requestId: error?.request_id ?? res.headers.get("x-request-id"),
  });
}

/** `GET /admin/key-check`: resolves when `apiKey` is right, else throws why not. */
export async function checkKey(apiKey: string): Promise<void> {
  await keyed("GET", "/admin/key-check", apiKey);
}

/** An operator action a plugin offers, as `GET /admin/actions` lists it (the server's type; erased from the bundle). */
export type OperatorAction = ListedAction;

/** The operator actions of the installed plugins. */
export async function operatorActions(): Promise<OperatorAction[]> {
  return ((await keyed("GET", "/admin/actions", signedInKey() ?? "")) as { actions: OperatorAction[] }).actions;
}

/** Runs `action` with the signed-in key; resolves to its JSON answer. */
export const runAction = (action: OperatorAction): Promise<unknown> =>
  keyed(action.method, action.path, signedInKey() ?? "", action.csrf);

/** A health route's answer whatever its status (they answer 503 with a body); undefined when unreachable. */
export async function probe<T>(path: string): Promise<T | undefined> {
  try {
    const res = await revalidating(urlOf(path), { headers: { accept: "application/json" } });
    return (await res.json()) as T;
  } catch {
    return undefined;
  }
}

/** The failure as one line for the user, with the request id an operator can find in the log. */
export function describe(error: unknown): string {
  if (error instanceof VellumNetworkError) return "The service could not be reached.";
  if (error instanceof VellumApiError)
    return error.requestId ? `${error.message} (request ${error.requestId})` : error.message;
  if (error instanceof VellumError || error instanceof Error) return error.message;
  return String(error);
}
