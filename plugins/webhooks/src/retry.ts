import { parseDuration } from "./duration.js";
import { DeliveryFailure } from "./send.js";

/** Up to 20 % either way, so receivers that fail together are not retried together. */
const JITTER = 0.2;

/**
 * The delay before retry `attempt` (1-based): the schedule's entry with jitter or, when the
 * receiver answered with `Retry-After`, what it asked for, at most the schedule's longest delay.
 */
export function webhookBackoff(schedule: readonly string[]): (attempt: number, error: unknown) => number {
  const delays = schedule.map((entry) => parseDuration(entry) ?? 0);
  const longest = Math.max(...delays);
  return (attempt, error) => {
    const asked = error instanceof DeliveryFailure ? error.retryAfterMs : undefined;
    if (asked !== undefined) return Math.min(asked, longest);
    const base = delays[Math.min(attempt, delays.length) - 1] ?? longest;
    return Math.round(base * (1 - JITTER + Math.random() * 2 * JITTER));
  };
}
