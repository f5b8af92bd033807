import type { CliSettingDeclaration } from "./own-settings.js";

/** A plain value in one line: lists comma-separated (`(empty)` when empty), objects as JSON. */
export function showPlain(value: unknown): string {
  if (Array.isArray(value)) return value.length === 0 ? "(empty)" : value.join(",");
  if (typeof value === "object" && value !== null) return JSON.stringify(value);
  return String(value);
}

/** A setting's effective value as `vellum config` prints it; a secret only as `(set)` or `(not set)`. */
export function showValue(declaration: CliSettingDeclaration, value: unknown): string {
  if (declaration.secret) return value === undefined || value === "" ? "(not set)" : "(set)";
  if (value === undefined) return declaration.defaultText ?? "(not set)";
  return declaration.show ? declaration.show(value) : showPlain(value);
}
