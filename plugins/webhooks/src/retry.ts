import { parseDuration } from "./duration.js";
import { DeliveryFailure } from "./send.js";

/** Up to 20 % either way, so receivers that fail together are not retried together. */
const JITTER = 0.2;

/**
 * The delay before retry `attempt` (1-based): the schedule's entry with jitter. A receiver's
 * `Retry-After` can only push it later, up to the schedule's longest delay: a `Retry-After: 0`
 * does not turn the schedule into a burst of attempts.
 */
export function webhookBackoff(schedule: readonly string[]): (attempt: number, error: unknown) => number {
  const delays = schedule.map((entry) => parseDuration(entry) ?? 0);
  const longest = Math.max(...delays);
  return (attempt, error) => {
    const base = delays[Math.min(attempt, delays.length) - 1] ?? longest;
    const scheduled = Math.round(base * (1 - JITTER + Math.random() * 2 * JITTER));
    const asked = error instanceof DeliveryFailure ? error.retryAfterMs : undefined;
    return asked === undefined ? scheduled : Math.max(scheduled, Math.min(asked, longest));
  };
}
