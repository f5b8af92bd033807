type Tree = Record<string, unknown>;

const isTree = (value: unknown): value is Tree => typeof value === "object" && value !== null;

/** The value at a dotted key (`security.apiKey`) of nested objects; undefined when any step is missing. */
export function getPath(tree: unknown, key: string): unknown {
  let node = tree;
  for (const step of key.split(".")) {
    if (!isTree(node)) return undefined;
    node = node[step];
  }
  return node;
}

/** Nested objects from dotted keys: `{ "security.apiKey": k }` → `{ security: { apiKey: k } }`. */
export function nest(values: Record<string, unknown>): Tree {
  const tree: Tree = {};
  for (const [key, value] of Object.entries(values)) {
    const steps = key.split(".");
    const last = steps.pop() ?? key;
    let node = tree;
    for (const step of steps) {
      if (!isTree(node[step])) node[step] = {};
      node = node[step] as Tree;
    }
    node[last] = value;
  }
  return tree;
}
