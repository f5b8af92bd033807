/**
 * What handlers return for a response with a status or headers of their own. The kernel turns it
 * into the final response in one step, with its own headers (request id, security, cookie) in the
 * same plain object, so Node's adapter writes it without building a `Headers` or a web stream.
 */
export class Reply {
  constructor(
    readonly body: string | null,
    readonly status: number,
    readonly headers: Readonly<Record<string, string>>,
  ) {}
}

export function isReply(value: unknown): value is Reply {
  return value instanceof Reply;
}

/** A JSON reply. */
export function json(body: unknown, init: { status?: number; headers?: Record<string, string> } = {}): Reply {
  return rawJson(JSON.stringify(body), init);
}

/**
 * A JSON reply whose body is already JSON text, e.g. rendered by the database (`json_object`):
 * the handler vouches that `body` is valid JSON.
 */
export function rawJson(body: string, init: { status?: number; headers?: Record<string, string> } = {}): Reply {
  return new Reply(body, init.status ?? 200, { "content-type": "application/json; charset=utf-8", ...init.headers });
}

/** A text reply (Prometheus exposition, CSV, …); set `content-type` in `headers`. */
export function text(body: string, init: { status?: number; headers: Record<string, string> }): Reply {
  return new Reply(body, init.status ?? 200, init.headers);
}
