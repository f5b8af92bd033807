import { describe, expect, it } from "vitest";
import * as core from "../src/index.js";
import * as node from "../src/node/index.js";
import * as testing from "../src/testing/index.js";

describe("public exports", () => {
  it("@vellum/core", () => {
    expect(Object.keys(core).sort()).toMatchInlineSnapshot(`
      [
        "API_ERROR_DESCRIPTIONS",
        "API_ERROR_STATUS",
        "ApiError",
        "CoreErrors",
        "HTML_CSP",
        "MAX_JSON_BYTES",
        "MIN_API_KEY_LENGTH",
        "MemoryRateLimitStore",
        "PreparedColumn",
        "PreparedInsert",
        "PreparedQuery",
        "Reply",
        "RequiredFlushError",
        "SLUG_PATTERN",
        "Type",
        "VellumError",
        "checkSettings",
        "checkSlug",
        "clientIp",
        "collectForCommit",
        "compileTrustProxy",
        "createErrorType",
        "createVellum",
        "databasePath",
        "declaredCommands",
        "defineConfig",
        "definePlugin",
        "defineVellumPlugin",
        "deleteInChunks",
        "describeTrustProxy",
        "directoryBytes",
        "effectiveAuth",
        "errorResponse",
        "intQuery",
        "isLoopback",
        "isReply",
        "json",
        "loadOrCreateSecret",
        "matchCommand",
        "matchedRoute",
        "migrationChecksum",
        "migrationTableName",
        "mountPrefix",
        "offlineCommand",
        "offlineContext",
        "parseList",
        "pathParam",
        "prepareDataDir",
        "publicPath",
        "publishSecretFile",
        "rawJson",
        "readJsonBody",
        "readResponse",
        "readSettingsFromEnv",
        "requestBodyStream",
        "requestId",
        "requestTarget",
        "resolvePlugins",
        "responseFrom",
        "setting",
        "settingDefaults",
        "slugSchema",
        "sql",
        "text",
        "trustEntryProblem",
        "ulidFactory",
        "validationFailed",
        "walkFiles",
      ]
    `);
  });
  it("@vellum/core/node", () => {
    expect(Object.keys(node).sort()).toMatchInlineSnapshot(`
      [
        "createNodeListener",
        "listen",
      ]
    `);
  });
  it("@vellum/core/testing", () => {
    expect(Object.keys(testing).sort()).toMatchInlineSnapshot(`
      [
        "TEST_API_KEY",
        "createTestVellum",
        "eventLoopTurns",
      ]
    `);
  });
});
