import { MemoryRateLimitStore, type RateLimitStore, type RateLimitStoreStatus } from "@vellum/core";
import { Redis, ReplyError, type Result } from "ioredis";

declare module "ioredis" {
  interface RedisCommander<Context> {
    vellumIncrement(key: string, windowMs: number): Result<[number, number], Context>;
    vellumSetFlag(key: string, set: string, until: number, ttlMs: number, now: number): Result<number, Context>;
    vellumCountFlags(set: string, now: number): Result<number, Context>;
  }
}

export interface RedisRateLimitStoreOptions {
  /** `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS). */
  url: string;
  /** Put before every key, so deployments can share one Redis (default `vellum:`). */
  prefix?: string;
  /**
   * Milliseconds a command may take before this process counts on its own instead (default 250). A
   * connection that answers nothing for that long is also dropped, and ioredis connects again.
   */
  commandTimeoutMs?: number;
  /** Told once when Redis stops answering and once when it answers again. */
  onStateChange?: (status: RateLimitStoreStatus) => void;
}

/**
 * Adds one to a counter; the first hit starts its window (ARGV[1], whole milliseconds: `PEXPIRE`
 * refuses a fraction, and the counter would then never expire). Returns the count and the milliseconds left.
 */
const INCREMENT = `
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}`;

/**
 * Sets a flag until ARGV[1] (epoch ms) and files it in its namespace's set, scored by that time.
 * Drops the flags expired by ARGV[3] (now) from the set: it lives as long as its longest flag, so
 * with steady lockouts only this keeps it from growing.
 */
const SET_FLAG = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[1], KEYS[1])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
return 1`;

/** Live flags of a namespace: drops those expired by ARGV[1] (epoch ms), counts the rest. */
const COUNT_FLAGS = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
return redis.call('ZCARD', KEYS[1])`;

const namespaceOf = (key: string) => key.slice(0, key.indexOf(":") + 1);

/** The later of two flag expiry times. */
const later = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b);

/**
 * Wait before the first PING after a failure (or, after a refused command, before a command is
 * tried again); it doubles after each one that fails, up to the maximum.
 */
const FIRST_PROBE_MS = 1_000;
const MAX_PROBE_MS = 10_000;

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
 * When Redis does not answer within `commandTimeoutMs` (down, unreachable, too slow) or fails a
 * command, that call is answered by an in-process store instead, and so is every later one, without
 * asking Redis, until a PING in the background (after 1 s, then at doubling intervals up to 10 s)
 * or a new connection shows that Redis answers again: limits and lockouts keep holding, per
 * process, and only the calls already sent when Redis stopped answering wait for it. A command
 * Redis refuses (out of memory, a read-only replica, a key of another type) is not an outage that a
 * PING can end, since Redis still answers PINGs: after one, this process counts on its own and
 * tries a real command again at the same doubling intervals, and answers together again once one
 * goes through. Nothing waits for a reconnect (no offline queue), and a connection that answers
 * nothing within `commandTimeoutMs` is dropped, so unanswered commands do not pile up on it. A
 * lockout set in this process meanwhile still holds once Redis answers.
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #where: string;
  readonly #fallback = new MemoryRateLimitStore();
  readonly #onStateChange: ((status: RateLimitStoreStatus) => void) | undefined;
  #failure: string | undefined;
  /** The PING waiting or on its way while Redis is not asked (`#probeLater`). */
  #probe: NodeJS.Timeout | undefined;
  /** The wait before the next PING; back to the first one on a new connection. */
  #probeDelayMs = FIRST_PROBE_MS;
  /** After a refused command: when a command may go to Redis again (epoch ms). */
  #retryAt: number | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: RedisRateLimitStoreOptions) {
    this.#prefix = options.prefix ?? "vellum:";
    this.#where = describeUrl(options.url);
    this.#onStateChange = options.onStateChange;
    const commandTimeout = options.commandTimeoutMs ?? 250;
    this.#redis = new Redis(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout,
      socketTimeout: commandTimeout,
      connectTimeout: 2_000,
      retryStrategy: (attempt) => Math.min(attempt * 250, 2_000),
    });
    // Without a listener ioredis prints every connection error; the state below says it once.
    this.#redis.on("error", (error: Error) => this.#failed(error));
    this.#redis.on("ready", () => {
      this.#probeDelayMs = FIRST_PROBE_MS;
      this.#recovered();
    });
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
        const [count, ttl] = await this.#redis.vellumIncrement(this.#key(key), Math.ceil(windowMs));
        return { count, resetAt: Date.now() + ttl };
      },
      () => this.#fallback.increment(key, windowMs),
    );
  }

  async setFlag(key: string, ttlMs: number): Promise<void> {
    if (!(ttlMs > 0)) return this.delete(key);
    await this.#attempt(
      async () => {
        const now = Date.now();
        await this.#redis.vellumSetFlag(this.#key(key), this.#flagSet(key), now + ttlMs, Math.ceil(ttlMs), now);
      },
      () => this.#fallback.setFlag(key, ttlMs),
    );
  }

  /** The later of the flag in Redis and one set in this process while Redis did not answer. */
  async getFlag(key: string): Promise<number | undefined> {
    const local = await this.#fallback.getFlag(key);
    return this.#attempt(
      async () => {
        const until = Number(await this.#redis.get(this.#key(key)));
        return later(until > Date.now() ? until : undefined, local);
      },
      async () => local,
    );
  }

  /** Removes the key from Redis and from this process, where it may have been set while Redis did not answer. */
  async delete(key: string): Promise<void> {
    await this.#fallback.delete(key);
    await this.#attempt(
      () => this.#removeFlag(key),
      async () => undefined,
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

  /** Closes the connection; later calls share the first one's promise (`vellum serve` closes it after the kernel did). */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearTimeout(this.#probe);
      await this.#fallback.close();
      await this.#redis.quit().catch(() => this.#redis.disconnect());
    })();
    return this.#closing;
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

  /**
   * Runs `shared` against Redis; when it fails, `local` answers and the store reports itself
   * degraded. While degraded, `local` answers at once: Redis is not asked until it answers a PING
   * or a new connection is up, or, after a refused command, until a retry is due; a call that
   * Redis answers ends the failure.
   */
  async #attempt<T>(shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    if (this.#failure !== undefined && !this.#retryDue()) return local();
    try {
      const result = await shared();
      this.#recovered();
      return result;
    } catch (error) {
      this.#failed(error);
      return local();
    }
  }

  /** After a refused command, whether this call is the one that tries Redis again. */
  #retryDue(): boolean {
    if (this.#retryAt === undefined || Date.now() < this.#retryAt) return false;
    this.#retryAt = Date.now() + this.#nextDelay();
    return true;
  }

  #failed(error: unknown): void {
    if (this.#closing !== undefined) return;
    const refused = error instanceof ReplyError;
    const reason = error instanceof Error ? error.message : String(error);
    if (refused) {
      this.#retryAt ??= Date.now() + this.#nextDelay();
    } else {
      this.#retryAt = undefined;
      this.#probeLater();
    }
    if (this.#failure !== undefined) return;
    this.#failure = refused
      ? `Redis at ${this.#where} refused a command (${reason}); counting in this process until it takes one again`
      : `Redis at ${this.#where} does not answer (${reason}); counting in this process until it does`;
    this.#onStateChange?.(this.status());
  }

  /** The current wait, doubling the next one up to the maximum. */
  #nextDelay(): number {
    const delay = this.#probeDelayMs;
    this.#probeDelayMs = Math.min(delay * 2, MAX_PROBE_MS);
    return delay;
  }

  /** PINGs Redis after the current wait (unless a PING is already on its way); an answer ends the failure. */
  #probeLater(): void {
    if (this.#probe !== undefined) return;
    const delay = this.#nextDelay();
    this.#probe = setTimeout(() => {
      this.#redis.ping().then(
        () => this.#recovered(),
        (error: unknown) => {
          this.#probe = undefined;
          this.#failed(error);
        },
      );
    }, delay);
    this.#probe.unref();
  }

  #recovered(): void {
    if (this.#closing !== undefined || this.#failure === undefined) return;
    clearTimeout(this.#probe);
    this.#probe = undefined;
    this.#retryAt = undefined;
    this.#probeDelayMs = FIRST_PROBE_MS;
    this.#failure = undefined;
    this.#onStateChange?.(this.status());
  }
}
