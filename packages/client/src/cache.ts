import type { RequestOptions } from "./options.js";
import type { Transport } from "./transport.js";
import type { PurgeResult } from "./types.js";

/** `POST /api/v1/cache/purge` (5 a minute per client; every write purges what it changed by itself). */
export class CacheApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** Purges what the article shows on (its page, the list, its tags' pages), here and at a configured CDN. */
  async purge(slug: string, options: RequestOptions = {}): Promise<PurgeResult> {
    return this.#transport.json<PurgeResult>({
      method: "POST",
      path: "/api/v1/cache/purge",
      json: { slug },
      write: true,
      signal: options.signal,
    });
  }
}
