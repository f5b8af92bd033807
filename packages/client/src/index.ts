export type { ArticlesApi, ListOptions, QueuedCreate } from "./articles.js";
export type { CacheApi } from "./cache.js";
export { type SearchOptions, VellumClient, createClient } from "./client.js";
export type { CsrfTokens } from "./csrf.js";
export {
  type ErrorDetail,
  type VellumApiErrorInit,
  type VellumErrorCode,
  VellumApiError,
  VellumError,
  VellumJobFailedError,
  VellumNetworkError,
  VellumTimeoutError,
} from "./errors.js";
export type { JobsApi, WaitOptions } from "./jobs.js";
export type { MediaApi, UploadOptions } from "./media.js";
export { type ClientOptions, type CookieMode, defaultCookieMode, type RequestOptions } from "./options.js";
export type * from "./types.js";
