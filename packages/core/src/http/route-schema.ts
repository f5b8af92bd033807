import type { TObject, TSchema } from "typebox";

/**
 * The schema keyword naming the contract code that a value of the right type but the wrong form
 * gets instead of `validation_failed` (a slug: `invalid_slug`). It wins over the other problems.
 */
export const ERROR_CODE = "x-error-code";

/** One response a route documents: its status is the key it is declared under. */
export interface ResponseSchema {
  description: string;
  /** The JSON body's schema; none for an empty body (`204`) or a non-JSON one. */
  body?: TSchema;
  /** The body's media type when it is not JSON (`text/html`, `text/plain`, `application/octet-stream`). */
  type?: string;
  /** Response headers worth documenting (`Location`, `Retry-After`), by name. */
  headers?: Record<string, string>;
}

/**
 * What a route accepts and answers, declared with the route. The kernel validates `query` and
 * `body` before the handler runs (so a handler sees only input the schema allows) and the OpenAPI
 * document is generated from the same declaration, so the two cannot drift.
 */
export interface RouteSchema {
  /** One line for the reference. */
  summary: string;
  description?: string;
  /** Groups the operation in the reference; the registering plugin's name when absent. */
  tags?: string[];
  /** Path parameters (`:slug` → `slug`), documented; handlers read them with `pathParam`. */
  params?: TObject;
  /** Query parameters, converted from text and validated; a violation is `invalid_parameter`. */
  query?: TObject;
  /** A JSON body, validated; a violation is `validation_failed` with a detail per field. */
  body?: TSchema;
  /**
   * The JSON body may be left out: a request with no `Content-Type` and no body skips the check
   * and its handler reads `{}`. Default: a body is required (a request without one is 415).
   */
  bodyOptional?: boolean;
  /** A `multipart/form-data` body, documented (its handler streams and checks it). */
  multipart?: TObject;
  /** Every success status the route answers, and any error status worth its own description. */
  response: Record<number, ResponseSchema>;
}
