/**
 * The API key the user signed in with. It lives in this tab's session storage only: closing the tab
 * signs out, and other tabs and sites never see it. Reads need no key; writes send it.
 */
const STORAGE_KEY = "vellum-admin-key";

export function signedInKey(): string | undefined {
  return sessionStorage.getItem(STORAGE_KEY) ?? undefined;
}

export function signIn(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key);
}

export function signOut(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
