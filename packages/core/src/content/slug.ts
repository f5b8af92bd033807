import { ApiError } from "../errors/api-error.js";

/** Article slugs (contract §3): lowercase letters, digits, `-` and `_`, 1 to 200 characters. */
export const SLUG_PATTERN = /^[a-z0-9_-]{1,200}$/;

/** Returns `value` when it is a slug; otherwise throws the contract's `invalid_slug` (400). */
export function checkSlug(value: unknown): string {
  if (typeof value !== "string" || !SLUG_PATTERN.test(value)) {
    throw new ApiError(
      "invalid_slug",
      "The slug must be lowercase alphanumeric with hyphens or underscores, 1 to 200 characters.",
    );
  }
  return value;
}
