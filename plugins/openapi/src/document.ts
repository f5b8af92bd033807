import { API_ERROR_STATUS, effectiveAuth, type RouteRecord, type RouteSchema, type TSchema } from "@vellum/core";

type Json = Record<string, unknown>;

export interface DocumentInfo {
  title: string;
  version: string;
  /** Where the routes are served from: the mount prefix, `/` at the root. */
  server: string;
  /** The routes to document: those that exist with the running features. */
  routes: readonly RouteRecord[];
}

/** A TypeBox schema as plain JSON Schema (TypeBox keeps its own marks as symbol keys). */
const plain = (schema: TSchema): Json => JSON.parse(JSON.stringify(schema)) as Json;

/** `/api/v1/articles/:slug` → `/api/v1/articles/{slug}`. */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

const operationId = (route: RouteRecord) =>
  `${route.method.toLowerCase()}${route.path
    .split(/[/:-]+/)
    .filter(Boolean)
    .map((part) => part[0]?.toUpperCase() + part.slice(1))
    .join("")}`;

const ERROR_ENVELOPE = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message", "request_id", "docs"],
      properties: {
        code: { type: "string", enum: Object.keys(API_ERROR_STATUS) },
        message: { type: "string" },
        request_id: { type: "string" },
        docs: { type: "string", description: "A link to the code's entry on the errors page" },
        details: {
          type: "array",
          items: {
            type: "object",
            required: ["field", "message"],
            properties: { field: { type: "string" }, message: { type: "string" } },
          },
        },
      },
    },
  },
};

const SECURITY_SCHEMES = {
  apiKey: { type: "http", scheme: "bearer", description: "The API key (`SERVICE_API_KEY`)" },
  apiKeyHeader: { type: "apiKey", in: "header", name: "X-API-Key", description: "The API key, for runbook tools" },
  csrfToken: { type: "apiKey", in: "header", name: "X-CSRF-Token", description: "The token of `GET /api/v1/csrf`" },
  csrfCookie: { type: "apiKey", in: "cookie", name: "svc_csrf", description: "The cookie `GET /api/v1/csrf` sets" },
};

function security(route: RouteRecord): Json[] | undefined {
  const auth = effectiveAuth(route.method, route.meta);
  if (!auth.key) return undefined;
  if (auth.csrf) return [{ apiKey: [], csrfToken: [], csrfCookie: [] }];
  return route.meta.apiKeyHeader ? [{ apiKey: [] }, { apiKeyHeader: [] }] : [{ apiKey: [] }];
}

function parameters(schema: RouteSchema): Json[] {
  const found: Json[] = [];
  for (const [place, object] of [
    ["path", schema.params],
    ["query", schema.query],
  ] as const) {
    if (!object) continue;
    const required = new Set((object.required as string[] | undefined) ?? []);
    for (const [name, property] of Object.entries(object.properties as Record<string, TSchema>)) {
      const { description, ...rest } = plain(property);
      found.push({
        name,
        in: place,
        required: place === "path" || required.has(name),
        ...(description === undefined ? {} : { description }),
        schema: rest,
      });
    }
  }
  return found;
}

function requestBody(schema: RouteSchema): Json | undefined {
  if (schema.body) {
    return { required: !schema.bodyOptional, content: { "application/json": { schema: plain(schema.body) } } };
  }
  if (schema.multipart)
    return { required: true, content: { "multipart/form-data": { schema: plain(schema.multipart) } } };
  return undefined;
}

function responses(schema: RouteSchema): Json {
  const found: Json = {};
  for (const [status, response] of Object.entries(schema.response)) {
    const entry: Json = { description: response.description };
    if (response.body) entry.content = { "application/json": { schema: plain(response.body) } };
    else if (response.type) entry.content = { [response.type]: { schema: { type: "string" } } };
    else if (Number(status) >= 400)
      entry.content = { "application/json": { schema: { $ref: "#/components/schemas/Error" } } };
    if (response.headers) {
      entry.headers = Object.fromEntries(
        Object.entries(response.headers).map(([name, description]) => [
          name,
          { description, schema: { type: "string" } },
        ]),
      );
    }
    found[status] = entry;
  }
  found.default = { $ref: "#/components/responses/Error" };
  return found;
}

/** The operation of one route; a route declared without a schema is listed with what is known. */
function operation(route: RouteRecord): Json {
  const schema = route.meta.schema;
  const op: Json = {
    operationId: operationId(route),
    tags: schema?.tags ?? [route.plugin],
    summary: schema?.summary ?? `${route.method} ${route.path} (declared without a schema)`,
  };
  if (schema?.description) op.description = schema.description;
  const params = schema ? parameters(schema) : [];
  if (params.length > 0) op.parameters = params;
  const body = schema && requestBody(schema);
  if (body) op.requestBody = body;
  op.responses = schema ? responses(schema) : { default: { $ref: "#/components/responses/Error" } };
  const required = security(route);
  if (required) op.security = required;
  if (route.meta.deprecated) op.deprecated = true;
  if (route.meta.rateLimit) op["x-vellum-rate-limit"] = route.meta.rateLimit;
  if (route.meta.cacheTags) op["x-vellum-cacheable"] = true;
  op["x-vellum-plugin"] = route.plugin;
  return op;
}

/** The OpenAPI 3.1 document of `routes`, generated from their declarations. */
export function openApiDocument(info: DocumentInfo): Json {
  const paths: Record<string, Json> = {};
  for (const route of info.routes) {
    const item = (paths[openApiPath(route.path)] ??= {});
    item[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: info.title,
      version: info.version,
      description: "Generated from the route declarations of the installed plugins. Errors: /docs/api/errors.",
    },
    servers: [{ url: info.server }],
    paths,
    components: {
      schemas: { Error: ERROR_ENVELOPE },
      responses: {
        Error: {
          description: "An error, in the envelope every error uses",
          content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
        },
      },
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
