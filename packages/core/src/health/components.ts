import { CoreErrors } from "../errors/vellum-error.js";

export type ComponentState = "ok" | "degraded" | "unavailable";

/**
 * What a component says about the seed's ethics commitments, for `/health/ethics`. A claim left
 * out is not made: `/health/ethics` shows a commitment no component claims as `null`.
 */
export interface EthicsClaims {
  /** This component keeps backups, and all of them are encrypted (`false`: some are not). */
  backups_encrypted?: boolean;
  /** This component logs search queries. */
  search_queries_logged?: boolean;
}

/** One check of a component, as `/health`, `/health/<name>` and `/health/dependencies` show it. */
export interface ComponentReport {
  state: ComponentState;
  /** Fields of `/health/<name>` and of its entry in `/health/dependencies` (never a secret). */
  detail?: Record<string, unknown>;
  ethics?: EthicsClaims;
}

/** A component a plugin registers with `ctx.healthComponent(...)`. */
export interface HealthComponent {
  /** `/health/<name>`, and its key in `/health` and `/health/dependencies`. */
  name: string;
  /** Counts in `/health/ready` (the instance is not ready while it is unavailable). */
  readiness?: boolean;
  check(): ComponentReport | Promise<ComponentReport>;
}

export interface RegisteredComponent extends HealthComponent {
  plugin: string;
}

/** The components plugins registered, in registration order; a name is taken once. */
export class HealthRegistry {
  readonly #components = new Map<string, RegisteredComponent>();

  register(plugin: string, component: HealthComponent): void {
    const existing = this.#components.get(component.name);
    if (existing) throw CoreErrors.componentDuplicate([component.name, existing.plugin, plugin], { plugin });
    this.#components.set(component.name, { ...component, plugin });
  }

  list(): readonly RegisteredComponent[] {
    return [...this.#components.values()];
  }
}
