/**
 * Requests a client gets wrong, each with the status contract §3 gives it. None may change
 * anything, none may answer 5xx, and each error is the envelope. None sends a wrong key: a wrong
 * key counts toward the lockout of 127.0.0.1, which would lock the soak's own writes out (a
 * missing key does not count, contract §4).
 * @param {Record<string, string>} writeHeaders the key and CSRF headers of a valid write
 * @returns {Array<{ name: string, method: string, path: string, body?: string, headers?: Record<string, string>, expect: number[] }>}
 */
export function hostileRequests(writeHeaders) {
  const json = { ...writeHeaders, "content-type": "application/json" };
  const never = `never-${Math.floor(Math.random() * 1e9)}`;
  return [
    { name: "broken JSON", method: "POST", path: "/api/v1/articles", body: '{"title":', headers: json, expect: [400] },
    { name: "JSON array", method: "POST", path: "/api/v1/articles", body: "[1,2]", headers: json, expect: [400] },
    {
      name: "title too long",
      method: "POST",
      path: "/api/v1/articles",
      body: JSON.stringify({ title: "t".repeat(301), slug: never, content: "<p>x</p>", tags: [] }),
      headers: json,
      expect: [400],
    },
    {
      name: "no key",
      method: "POST",
      path: "/api/v1/articles",
      body: JSON.stringify({ title: "x", slug: never, content: "<p>x</p>", tags: [] }),
      headers: { "content-type": "application/json" },
      expect: [401],
    },
    {
      name: "no CSRF token",
      method: "PUT",
      path: `/api/v1/articles/${never}`,
      body: JSON.stringify({ title: "x" }),
      headers: { authorization: writeHeaders.authorization ?? "", "content-type": "application/json" },
      expect: [403],
    },
    {
      name: "wrong content type",
      method: "POST",
      path: "/api/v1/articles",
      body: "title=x",
      headers: { ...writeHeaders, "content-type": "text/plain" },
      expect: [415],
    },
    {
      name: "update of an unknown slug",
      method: "PUT",
      path: `/api/v1/articles/${never}`,
      body: '{"title":"x"}',
      headers: json,
      expect: [404],
    },
    {
      name: "delete of an unknown slug",
      method: "DELETE",
      path: `/api/v1/articles/${never}`,
      headers: writeHeaders,
      expect: [404],
    },
    { name: "invalid slug", method: "GET", path: "/api/v1/articles/Not%20A%20Slug", expect: [400] },
    { name: "limit out of range", method: "GET", path: "/api/v1/articles?limit=1000", expect: [400] },
    { name: "forged cursor", method: "GET", path: "/api/v1/articles?cursor=AAAAAAAAAAAA", expect: [400] },
    { name: "unknown job", method: "GET", path: "/api/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV", expect: [404] },
    { name: "unknown route", method: "GET", path: "/api/v1/nothing-here", expect: [404] },
    { name: "unknown media", method: "GET", path: "/media/0000000000000000.png", expect: [404] },
    { name: "method not allowed", method: "PATCH", path: "/api/v1/articles", expect: [405] },
    // Searches count toward the search limit (10 a second) before their query is checked.
    { name: "empty search", method: "GET", path: "/api/v1/search?q=", expect: [400, 429] },
    {
      name: "upload that is not an image",
      method: "POST",
      path: "/api/v1/media",
      body: multipartText(),
      headers: { ...writeHeaders, "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
      expect: [415],
    },
  ];
}

const BOUNDARY = "soakboundary";

function multipartText() {
  return [
    `--${BOUNDARY}`,
    'Content-Disposition: form-data; name="file"; filename="notes.png"',
    "Content-Type: image/png",
    "",
    "these bytes are text, not an image",
    `--${BOUNDARY}--`,
    "",
  ].join("\r\n");
}
