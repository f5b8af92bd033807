/** A value that may still be on its way. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * `fn` of `value`: at once when it is not a promise (no promise or microtask is made), else once it
 * settles. For hot paths whose steps are usually synchronous: a request's hooks, or a read that
 * `PreparedQuery.rowsNow` answered at once.
 */
export function thenNow<T, R>(value: MaybePromise<T>, fn: (value: T) => MaybePromise<R>): MaybePromise<R> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}
