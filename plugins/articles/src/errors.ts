import { ApiError } from "@vellum/core";

/** Client errors of the articles routes, each mapped to its contract §3 code. */
export const ArticleErrors = {
  notFound: () => new ApiError("not_found", "No such article."),
  slugConflict: (slug: string) =>
    new ApiError("slug_conflict", `The slug '${slug}' belongs to another article or to a queued write.`),
  invalidCursor: () => new ApiError("invalid_cursor", "The cursor was not issued by this service."),
  invalidTag: () => new ApiError("invalid_parameter", "tag must be 1 to 64 characters."),
} as const;
