import { createClient, VellumApiError, VellumError, VellumNetworkError, type VellumClient } from "@vellum/client";
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

/**
 * `GET /admin/key-check` with `apiKey`: resolves when the key is right, else throws the answer's
 * error (`unauthorized`, `locked_out`, …) as the client's `VellumApiError`.
 */
export async function checkKey(apiKey: string): Promise<void> {
  const url = new URL("admin/key-check", baseUrl);
  let res: Response;
  try {
    res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}`, accept: "application/json" } });
  } catch (cause) {
    throw new VellumNetworkError("GET", url.href, cause);
  }
  if (res.ok) return;
  const { error } = (await res.json().catch(() => ({}))) as {
    error?: { code?: string; message?: string; request_id?: string };
  };
  throw new VellumApiError({
    status: res.status,
    code: error?.code ?? "unexpected_response",
    message: error?.message ?? `The server answered ${res.status}.`,
    requestId: error?.request_id ?? res.headers.get("x-request-id"),
  });
}

/** A health route's answer whatever its status (they answer 503 with a body); undefined when unreachable. */
export async function probe<T>(path: string): Promise<T | undefined> {
  try {
    const res = await revalidating(new URL(path.replace(/^\//, ""), baseUrl), {
      headers: { accept: "application/json" },
    });
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
