import { Type } from "typebox";
import { ApiError } from "../errors/api-error.js";
import { ERROR_CODE } from "../http/route-schema.js";

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

/** A slug in a route schema: a string that is not a slug is `invalid_slug`, anything else `validation_failed`. */
export const slugSchema = (description = "lowercase letters, digits, `-` and `_`, 1 to 200 characters") =>
  Type.String({ pattern: SLUG_PATTERN.source, description, [ERROR_CODE]: "invalid_slug" });
