import { closest, distance } from "fastest-levenshtein";
import { Hookable } from "hookable";
import { CoreErrors } from "../errors/vellum-error.js";
import type { HookName, HookPayload, VellumHooks } from "./types.js";

/**
 * How a hook runs. `commit`: inside a write's transaction (`ctx.write`); the writing plugin's own
 * subscribers fail the write, every other subscriber runs in a savepoint and a throw there is
 * rolled back and reported. `serial`: awaited in registration order, a throw aborts. `isolated`:
 * every subscriber runs, failures are reported and never propagate.
 */
export type HookKind = "commit" | "serial" | "isolated";

/** hookable's surface with the names erased; the typing lives on VellumHookBus's own methods. */
interface UntypedHooks {
  hook(name: string, fn: (payload: never) => unknown): () => void;
  callHook(name: string, payload: unknown): Promise<unknown> | undefined;
}

export type HookErrorReporter = (error: unknown, info: { plugin: string; hook: string }) => void;

/** A subscriber of a commit hook, with the plugin it belongs to (the write primitive isolates it). */
export interface CommitSubscriber {
  plugin: string;
  fn: (payload: never) => unknown;
  /** Its failure fails the write, as the writing plugin's own subscribers' do (`HookOptions.required`). */
  required: boolean;
}

/** Hooks the kernel itself emits. */
const CORE_HOOKS: Record<string, HookKind> = {
  "vellum:ready": "serial",
  "vellum:close": "serial",
  "vellum:error": "isolated",
  "http:error": "isolated",
  "http:request": "serial",
  "http:reply": "serial",
  "http:response": "serial",
  "storage:changed": "isolated",
  "storage:accounted": "isolated",
};

/**
 * Typed hooks: isolated ones on hookable, serial ones in a plain loop (the request hooks run on
 * every request, and hookable adds an async task per call). Every hook is declared by the plugin that emits it (the kernel declares
 * its own), with its kind; subscribing to a hook nobody declared is refused with the closest name.
 */
export class VellumHookBus {
  readonly #hookable = new Hookable() as unknown as UntypedHooks;
  readonly #report: HookErrorReporter;
  readonly #kinds = new Map<string, { kind: HookKind; owner: string }>();
  readonly #counts = new Map<string, number>();
  readonly #commit = new Map<string, CommitSubscriber[]>();
  /** Serial subscribers, called in a plain loop: the request hooks run on every request. */
  readonly #serial = new Map<string, Array<(payload: never) => unknown>>();

  constructor(report: HookErrorReporter) {
    this.#report = report;
    for (const [name, kind] of Object.entries(CORE_HOOKS)) this.declare("core", name, kind);
  }

  /** Declares hook `name` of `owner`; a second owner of the same name is refused. */
  declare(owner: string, name: string, kind: HookKind): void {
    const existing = this.#kinds.get(name);
    if (existing && existing.owner !== owner)
      throw CoreErrors.hookDuplicate([name, existing.owner, owner], { plugin: owner });
    this.#kinds.set(name, { kind, owner });
  }

  isDeclared(name: string): boolean {
    return this.#kinds.has(name);
  }

  #kind(name: string, plugin: string): HookKind {
    const declared = this.#kinds.get(name);
    if (!declared) {
      const guess = closest(name, [...this.#kinds.keys()]);
      const near = distance(name, guess) <= Math.max(2, name.length / 4);
      throw CoreErrors.hookUndeclared([name, plugin, near ? guess : undefined], { plugin });
    }
    return declared.kind;
  }

  register<N extends HookName>(plugin: string, name: N, fn: VellumHooks[N], required = false): () => void {
    const kind = this.#kind(name, plugin);
    if (required && kind !== "commit") throw CoreErrors.hookRequired([name, kind], { plugin });
    this.#counts.set(name, (this.#counts.get(name) ?? 0) + 1);
    let registered = true;
    const off = this.#subscribe(plugin, name, kind, fn, required);
    return () => {
      if (!registered) return;
      registered = false;
      this.#counts.set(name, (this.#counts.get(name) ?? 1) - 1);
      off();
    };
  }

  /** Whether anyone listens (hot paths skip building payloads for hooks nobody subscribed to). */
  hasSubscribers(name: HookName): boolean {
    return (this.#counts.get(name) ?? 0) > 0;
  }

  #subscribe<N extends HookName>(
    plugin: string,
    name: N,
    kind: HookKind,
    fn: VellumHooks[N],
    required: boolean,
  ): () => void {
    const call = fn as (payload: HookPayload<N>) => unknown;
    if (kind === "commit") {
      const entry: CommitSubscriber = { plugin, fn: call as CommitSubscriber["fn"], required };
      this.#commit.set(name, [...this.commitSubscribers(name), entry]);
      return () => {
        const rest = this.commitSubscribers(name).filter((s) => s !== entry);
        this.#commit.set(name, rest);
      };
    }
    if (kind === "serial") {
      const fn = call as (payload: never) => unknown;
      this.#serial.set(name, [...(this.#serial.get(name) ?? []), fn]);
      return () =>
        this.#serial.set(
          name,
          (this.#serial.get(name) ?? []).filter((f) => f !== fn),
        );
    }
    const isolated = async (payload: HookPayload<N>) => {
      try {
        await call(payload);
      } catch (error) {
        this.#report(error, { plugin, hook: name });
      }
    };
    return this.#hookable.hook(name, isolated);
  }

  /** The subscribers of commit hook `name`, in registration order (the write primitive runs them). */
  commitSubscribers(name: string): readonly CommitSubscriber[] {
    return this.#commit.get(name) ?? [];
  }

  /** Serial hooks: awaited in registration order; a throw rejects. Isolated: all run, never throws. */
  async call<N extends HookName>(name: N, payload: HookPayload<N>): Promise<void> {
    const kind = this.#kinds.get(name)?.kind;
    if (kind === "commit") throw CoreErrors.hookCommitCall([name]);
    if (kind === "serial") await this.serial(name, payload);
    else await this.#hookable.callHook(name, payload);
  }

  /**
   * Runs serial hook `name`'s subscribers in order; a promise only once one of them returns one.
   * The request hooks run on every request: synchronous subscribers cost no promise or microtask.
   */
  serial<N extends HookName>(name: N, payload: HookPayload<N>): Promise<void> | undefined {
    return this.#serialFrom(this.#serial.get(name) ?? [], 0, payload);
  }

  #serialFrom(
    fns: ReadonlyArray<(payload: never) => unknown>,
    from: number,
    payload: unknown,
  ): Promise<void> | undefined {
    for (let i = from; i < fns.length; i++) {
      const result = (fns[i] as (payload: unknown) => unknown)(payload);
      if (result instanceof Promise) return result.then(() => this.#serialFrom(fns, i + 1, payload));
    }
    return undefined;
  }
}

export interface HookOptions {
  /**
   * Subscribe only when an installed plugin declares the hook; without it nothing happens (a
   * plugin that works with or without, say, articles). Default: an undeclared hook fails setup.
   */
  optional?: boolean;
  /**
   * Commit hooks only: a throw fails the write instead of being rolled back and reported alone.
   * For a subscriber whose work must commit with the change or not at all (an outbox of events).
   */
  required?: boolean;
}

/** What a plugin (or the host) sees as `ctx.hooks` / `vellum.hooks`. */
export interface VellumHookApi {
  hook<N extends HookName>(name: N, fn: VellumHooks[N], options?: HookOptions): () => void;
  /** Calls a serial or isolated hook (commit hooks run through `ctx.write`). */
  callHook<N extends HookName>(name: N, payload: HookPayload<N>): Promise<void>;
}

/** A per-owner view that records its registrations so they can all be removed on close. */
export function createHookApi(bus: VellumHookBus, owner: string, registry: Array<() => void>): VellumHookApi {
  return {
    hook(name, fn, options) {
      if (options?.optional && !bus.isDeclared(name)) return () => undefined;
      const off = bus.register(owner, name, fn, options?.required);
      registry.push(off);
      return off;
    },
    callHook: (name, payload) => bus.call(name, payload),
  };
}
