import { signedInKey } from "./session.js";

/** What a failed request said: contract §3's envelope, or what the browser could tell. */
export interface Problem {
  status: number;
  code: string;
  message: string;
  requestId?: string;
  details?: Array<{ field: string; message: string }>;
}

export class ApiFailure extends Error {
  constructor(readonly problem: Problem) {
    super(problem.message);
  }
}

export interface ArticleSummary {
  id: string;
  title: string;
  slug: string;
  tags: string[];
  created_at: string;
  updated_at: string;
}

export interface Article extends ArticleSummary {
  content: string;
}

export interface SearchHit extends ArticleSummary {
  snippet: string;
}

export interface MediaItem {
  id: string;
  url: string;
  width: number | null;
  height: number | null;
  mime: string;
}

/** Where Vellum is mounted (`/cms`, or empty), as the page says; every address starts with it. */
const base = document.getElementById("app")?.dataset.base ?? "";

const WRITES = new Set(["POST", "PUT", "DELETE"]);
let csrfToken: string | undefined;

interface Options {
  body?: unknown;
  form?: FormData;
  /** Send the key although the method is a read (`/admin/key-check`). */
  key?: string;
}

async function problemOf(res: Response): Promise<Problem> {
  const envelope = (await res.json().catch(() => undefined)) as { error?: Partial<Problem> & { request_id?: string } };
  const error = envelope?.error;
  return {
    status: res.status,
    code: error?.code ?? `http_${res.status}`,
    message: error?.message ?? `The server answered ${res.status} ${res.statusText}.`,
    requestId: error?.request_id ?? res.headers.get("x-request-id") ?? undefined,
    ...(error?.details ? { details: error.details } : {}),
  };
}

async function send(method: string, path: string, options: Options, retried: boolean): Promise<Response> {
  const headers: Record<string, string> = { accept: "application/json" };
  const write = WRITES.has(method);
  const key = options.key ?? (write ? signedInKey() : undefined);
  if (key) headers.authorization = `Bearer ${key}`;
  if (write) headers["x-csrf-token"] = await csrf(retried);
  let body: BodyInit | undefined;
  if (options.form) body = options.form;
  else if (options.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.body);
  }
  let res: Response;
  try {
    // no-cache: revalidate cached reads (ETag), so a list shows a write the moment it is applied.
    res = await fetch(`${base}${path}`, { method, headers, body, cache: "no-cache", credentials: "same-origin" });
  } catch {
    throw new ApiFailure({ status: 0, code: "network", message: "The service could not be reached." });
  }
  if (res.ok) return res;
  const problem = await problemOf(res);
  // A token the server no longer accepts (its secret rotated): fetch a new one and try once more.
  if (problem.code === "csrf_failed" && !retried) return send(method, path, options, true);
  throw new ApiFailure(problem);
}

async function csrf(refresh: boolean): Promise<string> {
  if (csrfToken === undefined || refresh) {
    const res = await send("GET", "/api/v1/csrf", {}, false);
    csrfToken = ((await res.json()) as { token: string }).token;
  }
  return csrfToken;
}

/** A request to the service; resolves to the JSON body (undefined for 204), or throws `ApiFailure`. */
export async function call<T>(method: string, path: string, options: Options = {}): Promise<T> {
  const res = await send(method, path, options, false);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/** A request whose answer matters whatever its status (health pages answer 503 with a body). */
export async function probe<T>(path: string): Promise<{ status: number; body: T | undefined }> {
  try {
    const res = await fetch(`${base}${path}`, { headers: { accept: "application/json" }, cache: "no-cache" });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as T | undefined };
  } catch {
    return { status: 0, body: undefined };
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits for a queued write (`202 {"id"}`) to be applied; throws `ApiFailure` when it failed or
 * did not finish within `timeoutMs`.
 */
export async function waitForJob(id: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 100; ; wait = Math.min(wait * 2, 1_000)) {
    const job = await call<{ status: string; error?: { code?: string; message?: string } }>(
      "GET",
      `/api/v1/jobs/${encodeURIComponent(id)}`,
    );
    if (job.status === "applied") return;
    if (job.status === "failed") {
      const message = job.error?.message ?? "The write failed.";
      throw new ApiFailure({ status: 200, code: job.error?.code ?? "job_failed", message });
    }
    if (Date.now() > deadline)
      throw new ApiFailure({ status: 0, code: "timeout", message: "The write is still queued; check again later." });
    await sleep(wait);
  }
}

/** The failure as one line for the user, with the request id an operator can find in the log. */
export function describe(error: unknown): string {
  if (!(error instanceof ApiFailure)) return error instanceof Error ? error.message : String(error);
  const { message, requestId } = error.problem;
  return requestId ? `${message} (request ${requestId})` : message;
}
