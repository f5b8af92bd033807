import { Hookable } from "hookable";
import { type HookName, type HookPayload, isIsolatedHook, type VellumHooks } from "./types.js";

/** hookable's surface with the names erased; the typing lives on VellumHookBus's own methods. */
interface UntypedHooks {
  hook(name: string, fn: (payload: never) => unknown): () => void;
  callHook(name: string, payload: unknown): Promise<unknown> | undefined;
  callHookParallel(name: string, payload: unknown): Promise<unknown> | undefined;
}

export type HookErrorReporter = (error: unknown, info: { plugin: string; hook: string }) => void;

/**
 * Typed hooks on hookable with Vellum's two kinds. Serial hooks behave like hookable's
 * `callHook`: the first throw stops the rest and rejects, so `*:commit` hooks can roll back.
 * Isolated hooks run every subscriber even when one fails; failures go to the reporter with the
 * plugin and hook named.
 */
export class VellumHookBus {
  readonly #hookable = new Hookable() as unknown as UntypedHooks;
  readonly #report: HookErrorReporter;
  readonly #counts = new Map<string, number>();

  constructor(report: HookErrorReporter) {
    this.#report = report;
  }

  /** Registers `fn` for `name` on behalf of `plugin`; returns the unregister function. */
  register<N extends HookName>(plugin: string, name: N, fn: VellumHooks[N]): () => void {
    this.#counts.set(name, (this.#counts.get(name) ?? 0) + 1);
    let registered = true;
    const off = this.#subscribe(plugin, name, fn);
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

  #subscribe<N extends HookName>(plugin: string, name: N, fn: VellumHooks[N]): () => void {
    const call = fn as (payload: HookPayload<N>) => unknown;
    if (!isIsolatedHook(name)) return this.#hookable.hook(name, call);
    const isolated = async (payload: HookPayload<N>) => {
      try {
        await call(payload);
      } catch (error) {
        this.#report(error, { plugin, hook: name });
      }
    };
    return this.#hookable.hook(name, isolated);
  }

  /** Serial hooks: awaited in registration order; a throw rejects. Isolated: all run, never throws. */
  async call<N extends HookName>(name: N, payload: HookPayload<N>): Promise<void> {
    await this.#hookable.callHook(name, payload);
  }

  /** Runs the subscribers at once (used for `health:check`). */
  async callParallel<N extends HookName>(name: N, payload: HookPayload<N>): Promise<void> {
    await this.#hookable.callHookParallel(name, payload);
  }
}

/** What a plugin (or the host) sees as `ctx.hooks` / `vellum.hooks`. */
export interface VellumHookApi {
  hook<N extends HookName>(name: N, fn: VellumHooks[N]): () => void;
  callHook<N extends HookName>(name: N, payload: HookPayload<N>): Promise<void>;
  callHookParallel<N extends HookName>(name: N, payload: HookPayload<N>): Promise<void>;
}

/** A per-owner view that records its registrations so they can all be removed on close. */
export function createHookApi(bus: VellumHookBus, owner: string, registry: Array<() => void>): VellumHookApi {
  return {
    hook(name, fn) {
      const off = bus.register(owner, name, fn);
      registry.push(off);
      return off;
    },
    callHook: (name, payload) => bus.call(name, payload),
    callHookParallel: (name, payload) => bus.callParallel(name, payload),
  };
}
