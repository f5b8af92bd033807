import type { KernelInfo } from "@vellum/core";

/**
 * The security settings in force and the lockouts active right now. Never includes the key:
 * only whether one is configured and long enough.
 */
export async function security(kernel: KernelInfo) {
  const s = kernel.security;
  let lockoutsActive: number | null = null;
  try {
    lockoutsActive = await s.activeLockouts();
  } catch {
    lockoutsActive = null;
  }
  const lockoutEnabled = s.lockout.maxFailures > 0 && s.lockout.durationMs > 0;
  const checks = {
    api_key_configured: s.apiKeyConfigured,
    api_key_strong: s.apiKeyStrong,
    csrf_enabled: s.csrfEnabled,
    lockout_enabled: lockoutEnabled,
    /** Client addresses locked out of writes at this moment (null when the lockout store cannot be read). */
    lockouts_active: lockoutsActive,
    trust_proxy: s.trustProxy,
    /** Where rate-limit and lockout counters live; `degraded` while a shared store cannot be reached. */
    counter_store: s.counterStore(),
  };
  const ok =
    s.apiKeyConfigured &&
    s.apiKeyStrong &&
    s.csrfEnabled &&
    lockoutEnabled &&
    lockoutsActive !== null &&
    checks.counter_store.state === "ok";
  return {
    status: ok ? "ok" : "degraded",
    checks,
    lockout: {
      max_failures: s.lockout.maxFailures,
      window_seconds: s.lockout.windowMs / 1000,
      duration_seconds: s.lockout.durationMs / 1000,
    },
  };
}
