import type { H3Event } from "h3";
import type { TSchema } from "typebox";
import type * as TypeBoxCompile from "typebox/compile";
import type { TLocalizedValidationError } from "typebox/error";
import {
  API_ERROR_DESCRIPTIONS,
  ApiError,
  type ApiErrorCode,
  type ApiErrorDetail,
  validationFailed,
} from "../errors/api-error.js";
import { readJsonBody } from "./body.js";
import { ERROR_CODE, type RouteSchema } from "./route-schema.js";

type Handler = (event: H3Event) => unknown;

const unescapePointer = (part: string) => part.replace(/~1/g, "/").replace(/~0/g, "~");

/** `/tags/0` → `tags[0]`, `/a/b` → `a.b`: field names as the contract's `details` spell them. */
function fieldName(pointer: string, property?: string): string {
  const parts = pointer.split("/").slice(1).map(unescapePointer);
  if (property !== undefined) parts.push(property);
  return parts.reduce((field, part) => {
    if (/^\d+$/.test(part) && field) return `${field}[${part}]`;
    return field ? `${field}.${part}` : part;
  }, "");
}

const withArticle = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/** One problem in the service's own words ("must be at most 300 characters"). */
function describe(error: TLocalizedValidationError): string {
  const params = error.params as Record<string, unknown>;
  const limit = String(params.limit);
  switch (error.keyword) {
    case "type": {
      const types = ([] as unknown[]).concat(params.type).map(String);
      return `must be ${types.map(withArticle).join(" or ")}`;
    }
    case "minLength":
      return limit === "1" ? "must not be empty" : `must be at least ${limit} characters`;
    case "maxLength":
      return `must be at most ${limit} characters`;
    case "minItems":
      return `must have at least ${limit} items`;
    case "maxItems":
      return `must have at most ${limit} items`;
    case "minimum":
      return `must be at least ${limit}`;
    case "maximum":
      return `must be at most ${limit}`;
    case "enum":
      return `must be one of ${(params.allowedValues as unknown[]).map(String).join(", ")}`;
    case "pattern":
      return "is not in the accepted form";
    default:
      return error.message;
  }
}

/** The schema node a `schemaPath` (`#/properties/tags/items`) points to. */
function schemaAt(root: TSchema, path: string): Record<string, unknown> | undefined {
  let node: unknown = root;
  for (const part of path.split("/").slice(1).map(unescapePointer)) {
    node = (node as Record<string, unknown> | undefined)?.[part];
  }
  return node as Record<string, unknown> | undefined;
}

/**
 * The contract code a malformed value of the right type gets when its schema names one in
 * `x-error-code` (a slug that is a string but not a slug: `invalid_slug`); it wins over the
 * other problems, as a handler checking that value first would have made it.
 */
function codedError(root: TSchema, errors: TLocalizedValidationError[]): ApiError | undefined {
  for (const error of errors) {
    if (error.keyword === "type" || error.keyword === "required") continue;
    const code = schemaAt(root, error.schemaPath)?.[ERROR_CODE] as ApiErrorCode | undefined;
    if (code) return new ApiError(code, API_ERROR_DESCRIPTIONS[code]);
  }
  return undefined;
}

/** The problems of a value as contract `details`: a missing property and each other fault once. */
function details(errors: TLocalizedValidationError[]): ApiErrorDetail[] {
  const found: ApiErrorDetail[] = [];
  for (const error of errors) {
    const params = error.params as Record<string, unknown>;
    if (error.keyword === "required") {
      for (const property of params.requiredProperties as string[]) {
        found.push({ field: fieldName(error.instancePath, property), message: "is required" });
      }
    } else if (error.keyword === "additionalProperties") {
      for (const property of params.additionalProperties as string[]) {
        found.push({ field: fieldName(error.instancePath, property), message: "is not allowed" });
      }
    } else found.push({ field: fieldName(error.instancePath) || "body", message: describe(error) });
  }
  const seen = new Set<string>();
  return found.filter((detail) => {
    const key = `${detail.field}\n${detail.message}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

/** Details in the order the schema declares its properties (a missing one is reported where it belongs). */
function inDeclaredOrder(schema: TSchema, found: ApiErrorDetail[]): ApiErrorDetail[] {
  const order = Object.keys((schema as { properties?: object }).properties ?? {});
  const rank = (detail: ApiErrorDetail) => {
    const index = order.indexOf(detail.field.split(/[.[]/)[0] ?? "");
    return index < 0 ? order.length : index;
  };
  return found
    .map((detail, index) => ({ detail, index }))
    .sort((a, b) => rank(a.detail) - rank(b.detail) || a.index - b.index)
    .map(({ detail }) => detail);
}

function bodyError(schema: TSchema, errors: TLocalizedValidationError[]): ApiError {
  return codedError(schema, errors) ?? validationFailed(inDeclaredOrder(schema, details(errors)));
}

const NUMBER_TEXT: Record<string, RegExp> = { integer: /^-?\d{1,15}$/, number: /^-?\d{1,15}(\.\d{1,15})?$/ };

/**
 * A query value from text, as its declared type: only plain decimal text becomes a number
 * (`2.5` is not an integer and stays text, so the check names it), `true`/`false` a boolean.
 */
function fromText(text: string, schema: Record<string, unknown> | undefined): unknown {
  const type = schema?.type;
  if (typeof type === "string" && NUMBER_TEXT[type]?.test(text)) return Number(text);
  if (type === "boolean" && (text === "true" || text === "false")) return text === "true";
  return text;
}

/** The query as an object of its declared parameters, the first value of each, typed. */
function declaredQuery(event: H3Event, properties: Record<string, Record<string, unknown>>): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const value = event.url.searchParams.get(name);
    if (value !== null) query[name] = fromText(value, schema);
  }
  return query;
}

/**
 * TypeBox's compiler, loaded on the first request that needs a validator: it is most of TypeBox's
 * import time, which a start (and every CLI command) would otherwise pay.
 */
let compiler: Promise<typeof TypeBoxCompile> | undefined;
const loadCompiler = () => (compiler ??= import("typebox/compile"));

type Validator = ReturnType<typeof TypeBoxCompile.Compile>;

/** A handler that validates first; `prepare()` compiles its validators ahead of its first request. */
export type ValidatingHandler = Handler & { prepare?: () => Promise<void> };

/**
 * Wraps a route's handler so that its declared `query` and JSON `body` are checked before it
 * runs. Query values arrive as text and are read as their declared types first (`limit=5` is the
 * integer 5); the handler still reads them from the URL, now known to be valid. The validators
 * are compiled once, by `prepare()` when Vellum goes ready (not when a CLI command only loads the
 * plugins), or else on the route's first request.
 */
export function validatingHandler(schema: RouteSchema, handler: Handler): ValidatingHandler | Handler {
  if (!schema.query && !schema.body) return handler;
  const properties = (schema.query?.properties ?? {}) as Record<string, Record<string, unknown>>;
  let compiled: Promise<{ query?: Validator; body?: Validator }> | undefined;
  const validators = () =>
    (compiled ??= loadCompiler().then(({ Compile }) => ({
      query: schema.query && Compile(schema.query),
      body: schema.body && Compile(schema.body),
    })));
  const validating: ValidatingHandler = async (event) => {
    const { query, body } = await validators();
    if (query) {
      const values = declaredQuery(event, properties);
      const first = query.Check(values) ? undefined : details(query.Errors(values))[0];
      if (first) throw new ApiError("invalid_parameter", `${first.field} ${first.message}.`);
    }
    if (body && schema.body) {
      if (schema.bodyOptional) event.context.bodyOptional = true;
      const value = await readJsonBody(event);
      if (!body.Check(value)) throw bodyError(schema.body, body.Errors(value));
    }
    return handler(event);
  };
  validating.prepare = async () => {
    await validators();
  };
  return validating;
}
