// The host app's own server route (Nuxt and Nitro auto-import defineEventHandler from h3).
export default defineEventHandler(() => "nuxt server route\n");
