import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { CounterConfiguration, GaugeConfiguration, HistogramConfiguration } from "prom-client";

/** The metrics surface plugins get as `ctx.metrics`; names are registered once per instance. */
export interface VellumMetrics {
  readonly registry: Registry;
  counter<L extends string>(config: CounterConfiguration<L>): Counter<L>;
  gauge<L extends string>(config: GaugeConfiguration<L>): Gauge<L>;
  histogram<L extends string>(config: HistogramConfiguration<L>): Histogram<L>;
}

function assertName(name: string): void {
  if (!name.startsWith("service_")) {
    throw new TypeError(`metric '${name}' must start with the seed's prefix 'service_'`);
  }
}

/** One prom-client registry per Vellum instance (several instances can live in one process). */
export function createMetrics(): VellumMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "service_" });
  const getOr = <M>(name: string, make: () => M): M => {
    assertName(name);
    return (registry.getSingleMetric(name) as M | undefined) ?? make();
  };
  return {
    registry,
    counter: (config) => getOr(config.name, () => new Counter({ ...config, registers: [registry] })),
    gauge: (config) => getOr(config.name, () => new Gauge({ ...config, registers: [registry] })),
    histogram: (config) => getOr(config.name, () => new Histogram({ ...config, registers: [registry] })),
  };
}
