type Layer = Record<string, unknown>;

function isPlainObject(value: unknown): value is Layer {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Merges setting layers, later layers winning. Plain objects merge key by key; arrays, class instances and
 * other values replace; `undefined` never overrides and objects left empty are dropped.
 */
export function mergeLayers<T extends object>(...layers: Array<Partial<T> | undefined>): Partial<T> {
  const result: Layer = {};
  for (const layer of layers) {
    if (!layer) continue;
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      const current = result[key];
      if (!isPlainObject(value)) {
        result[key] = value;
        continue;
      }
      const merged = mergeLayers<Layer>(isPlainObject(current) ? current : {}, value);
      if (current !== undefined || Object.keys(merged).length > 0) result[key] = merged;
    }
  }
  return result as Partial<T>;
}
