interface Entry {
  promise: Promise<string>;
  /** Set once the fetch succeeded. */
  token?: string;
}

/**
 * The CSRF token of one client: fetched with `GET /api/v1/csrf` on the first write, then kept. Concurrent callers
 * share one fetch, a failed fetch is forgotten (the next call tries again), and writes refused with the same stale
 * token share one refresh.
 */
export class CsrfTokens {
  #entry: Entry | undefined;
  readonly #load: () => Promise<string>;

  constructor(load: () => Promise<string>) {
    this.#load = load;
  }

  /** The kept token, fetched if there is none yet. */
  token(): Promise<string> {
    return (this.#entry ?? this.#start()).promise;
  }

  /**
   * Asks the service again and keeps its answer. Given the `stale` token a write was refused with, a token that has
   * replaced it already (or is being fetched) is returned instead of asking once more.
   */
  refresh(stale?: string): Promise<string> {
    const entry = this.#entry;
    if (entry && stale !== undefined && entry.token !== stale) return entry.promise;
    return this.#start().promise;
  }

  #start(): Entry {
    const entry: Entry = { promise: this.#load() };
    entry.promise.then(
      (token) => {
        entry.token = token;
      },
      () => {
        if (this.#entry === entry) this.#entry = undefined;
      },
    );
    this.#entry = entry;
    return entry;
  }
}
