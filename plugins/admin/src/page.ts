/**
 * The admin page's policy: its own script and stylesheet only, requests to its own origin only,
 * images from anywhere an article may point (contract §5 allows http and https images) and the
 * previews of files being uploaded; no inline script or style, no frames, no forms posted away.
 */
export const ADMIN_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' https: http: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const escapeAttribute = (value: string) =>
  value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * The page that loads the UI. `prefix` is where Vellum is mounted (`/cms`, or empty): the assets'
 * addresses start with it, and the app reads it from `data-base` to address the API.
 */
export function adminPage(prefix: string, files: { script: string; style: string; icon: string }): string {
  const base = escapeAttribute(prefix);
  const asset = (name: string) => `${base}/admin/assets/${escapeAttribute(name)}`;
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="robots" content="noindex">',
    "<title>Vellum admin</title>",
    `<link rel="icon" href="${asset(files.icon)}" type="image/svg+xml">`,
    `<link rel="stylesheet" href="${asset(files.style)}">`,
    `<script type="module" src="${asset(files.script)}"></script>`,
    "</head>",
    `<body><div id="app" data-base="${base}"></div>`,
    "<noscript>The Vellum admin needs JavaScript.</noscript></body>",
    "</html>",
  ].join("\n");
}
