import { MemoryRateLimitStore, type RateLimitStore, type RateLimitStoreStatus } from "@vellum/core";
import { Redis, type Result } from "ioredis";

declare module "ioredis" {
  interface RedisCommander<Context> {
    vellumIncrement(key: string, windowMs: number): Result<[number, number], Context>;
    vellumSetFlag(key: string, set: string, until: number, ttlMs: number): Result<number, Context>;
    vellumCountFlags(set: string, now: number): Result<number, Context>;
  }
}

export interface RedisRateLimitStoreOptions {
  /** `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS). */
  url: string;
  /** Put before every key, so deployments can share one Redis (default `vellum:`). */
  prefix?: string;
  /** Milliseconds a command may take before this process counts on its own instead (default 250). */
  commandTimeoutMs?: number;
  /** Told once when Redis stops answering and once when it answers again. */
  onStateChange?: (status: RateLimitStoreStatus) => void;
}

/** Adds one to a counter; the first hit starts its window. Returns the count and the milliseconds left. */
const INCREMENT = `
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}`;

/** Sets a flag until ARGV[1] (epoch ms) and files it in its namespace's set, scored by that time. */
const SET_FLAG = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[1], KEYS[1])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
return 1`;

/** Live flags of a namespace: drops those expired by ARGV[1] (epoch ms), counts the rest. */
const COUNT_FLAGS = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
return redis.call('ZCARD', KEYS[1])`;

const namespaceOf = (key: string) => key.slice(0, key.indexOf(":") + 1);

/** The URL without its password, for messages. */
function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = "";
    parsed.username = "";
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === "/" ? "" : parsed.pathname}`;
  } catch {
    return "redis";
  }
}

/**
 * Rate-limit counters and lockouts in Redis, so every process of a deployment counts a client
 * together: behind a balancer over `n` processes a client gets its budget once, not `n` times, and
 * a lockout holds on all of them. Counters are fixed windows (`INCR` and `PEXPIRE` in one script);
 * a flag is a key with a TTL, also filed in a sorted set per namespace scored by its expiry, so
 * `countFlags` costs a range delete and a count, never a scan.
 *
 * When Redis does not answer within `commandTimeoutMs` (down, unreachable, too slow), a call is
 * answered by an in-process store instead: limits and lockouts keep holding, per process, until
 * Redis answers again. Nothing waits for a reconnect (no offline queue).
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #where: string;
  readonly #fallback = new MemoryRateLimitStore();
  readonly #onStateChange: ((status: RateLimitStoreStatus) => void) | undefined;
  #failure: string | undefined;

  constructor(options: RedisRateLimitStoreOptions) {
    this.#prefix = options.prefix ?? "vellum:";
    this.#where = describeUrl(options.url);
    this.#onStateChange = options.onStateChange;
    this.#redis = new Redis(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 250,
      connectTimeout: 2_000,
      retryStrategy: (attempt) => Math.min(attempt * 250, 2_000),
    });
    // Without a listener ioredis prints every connection error; the state below says it once.
    this.#redis.on("error", (error: Error) => this.#failed(error));
    this.#redis.on("ready", () => this.#recovered());
    this.#redis.defineCommand("vellumIncrement", { numberOfKeys: 1, lua: INCREMENT });
    this.#redis.defineCommand("vellumSetFlag", { numberOfKeys: 2, lua: SET_FLAG });
    this.#redis.defineCommand("vellumCountFlags", { numberOfKeys: 1, lua: COUNT_FLAGS });
  }

  /** Resolves once connected (or rejects after the connect timeout); calls before that count in this process. */
  async connected(): Promise<void> {
    if (this.#redis.status === "ready") return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Redis at ${this.#where} did not answer in 2 s`)), 2_000);
      this.#redis.once("ready", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  status(): RateLimitStoreStatus {
    return this.#failure === undefined
      ? { kind: "redis", shared: true, state: "ok" }
      : { kind: "redis", shared: true, state: "degraded", detail: this.#failure };
  }

  async increment(key: string, windowMs: number): Promise<{ count: number; resetAt: number }> {
    return this.#attempt(
      async () => {
        const [count, ttl] = await this.#redis.vellumIncrement(this.#key(key), windowMs);
        return { count, resetAt: Date.now() + ttl };
      },
      () => this.#fallback.increment(key, windowMs),
    );
  }

  async setFlag(key: string, ttlMs: number): Promise<void> {
    await this.#attempt(
      async () => {
        if (!(ttlMs > 0)) {
          await this.#removeFlag(key);
          return;
        }
        const until = Date.now() + ttlMs;
        await this.#redis.vellumSetFlag(this.#key(key), this.#flagSet(key), until, Math.ceil(ttlMs));
      },
      () => this.#fallback.setFlag(key, ttlMs),
    );
  }

  async getFlag(key: string): Promise<number | undefined> {
    return this.#attempt(
      async () => {
        const until = Number(await this.#redis.get(this.#key(key)));
        return until > Date.now() ? until : undefined;
      },
      () => this.#fallback.getFlag(key),
    );
  }

  async delete(key: string): Promise<void> {
    await this.#attempt(
      () => this.#removeFlag(key),
      () => this.#fallback.delete(key),
    );
  }

  async countFlags(prefix: string): Promise<number> {
    return this.#attempt(
      async () => {
        const set = `${this.#prefix}flags:${namespaceOf(prefix)}`;
        if (prefix === namespaceOf(prefix) && prefix.length > 0)
          return await this.#redis.vellumCountFlags(set, Date.now());
        const members = await this.#redis.zrangebyscore(set, Date.now(), "+inf");
        return members.filter((member) => member.startsWith(this.#key(prefix))).length;
      },
      () => this.#fallback.countFlags(prefix),
    );
  }

  async close(): Promise<void> {
    await this.#fallback.close();
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }

  #key(key: string): string {
    return `${this.#prefix}${key}`;
  }

  #flagSet(key: string): string {
    return `${this.#prefix}flags:${namespaceOf(key)}`;
  }

  async #removeFlag(key: string): Promise<void> {
    await this.#redis.multi().del(this.#key(key)).zrem(this.#flagSet(key), this.#key(key)).exec();
  }

  /** Runs `shared` against Redis; when it fails, `local` answers and the store reports itself degraded. */
  async #attempt<T>(shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    try {
      const value = await shared();
      this.#recovered();
      return value;
    } catch (error) {
      this.#failed(error);
      return local();
    }
  }

  #failed(error: unknown): void {
    if (this.#failure !== undefined) return;
    const reason = error instanceof Error ? error.message : String(error);
    this.#failure = `Redis at ${this.#where} does not answer (${reason}); counting in this process until it does`;
    this.#onStateChange?.(this.status());
  }

  #recovered(): void {
    if (this.#failure === undefined) return;
    this.#failure = undefined;
    this.#onStateChange?.(this.status());
  }
}
