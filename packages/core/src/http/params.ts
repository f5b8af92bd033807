import type { H3Event } from "h3";
import { ApiError } from "../errors/api-error.js";

/** Reads an integer query parameter within [min, max]; absent → fallback; anything else → 400. */
export function intQuery(
  event: H3Event,
  name: string,
  options: { min: number; max: number; fallback: number },
): number {
  const raw = event.url.searchParams.get(name);
  if (raw === null) return options.fallback;
  const value = Number(raw);
  if (!/^-?\d{1,12}$/.test(raw) || value < options.min || value > options.max) {
    throw new ApiError("invalid_parameter", `${name} must be an integer from ${options.min} to ${options.max}.`);
  }
  return value;
}

/** A path parameter, decoded; a malformed escape is a 404 (no such resource can exist). */
export function pathParam(event: H3Event, name: string): string {
  const raw = (event.context.params as Record<string, string> | undefined)?.[name];
  if (raw === undefined) throw new ApiError("not_found", "No such resource.");
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ApiError("not_found", "No such resource.");
  }
}
