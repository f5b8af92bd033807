export { type DocumentInfo, openApiDocument, openApiPath } from "./document.js";
export { referencePage } from "./page.js";
export { OPENAPI_PATH, openapi, REFERENCE_PATH } from "./plugin.js";
