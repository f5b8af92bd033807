export { createNodeListener, type FetchTarget, type NodeListener } from "./handler.js";
export { type Listenable, type ListenOptions, listen, type VellumServer } from "./listen.js";
