#!/usr/bin/env bash
# Builds native/sequence-copy/build/sequence-copy.node (run by `npm install` / `npm ci` through the
# postinstall script; no network). It needs g++ and git: llama.h and the ggml headers come from the
# llama.cpp source node-llama-cpp bundles (llama/gitRelease.bundle), the N-API functions are declared
# in the source itself. A failed build never fails the install: the worker then copies prefixes by
# restoring a saved state instead, and says so in its ready line.
#   native/sequence-copy/build.sh           # build unless the binary is newer than its source
#   native/sequence-copy/build.sh --force   # build again
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$here/build/sequence-copy.node"
src="$here/sequence-copy.cpp"
bundle="$root/node_modules/node-llama-cpp/llama/gitRelease.bundle"

if [ "${1:-}" != "--force" ] && [ -f "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt "$bundle" ]; then
  exit 0
fi
skip() {
  echo "sequence-copy: not built ($1); the worker copies prefixes by restoring a saved state instead" >&2
  exit 0
}
command -v g++ >/dev/null || skip "no g++"
command -v git >/dev/null || skip "no git"
[ -f "$bundle" ] || skip "no $bundle"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git init -q "$work/src" || skip "git init failed"
git -C "$work/src" fetch -q "$bundle" 2>/dev/null || skip "could not read $bundle"
git -C "$work/src" archive FETCH_HEAD include/llama.h ggml/include | tar -x -C "$work" || skip "llama.h not found in the bundle"

mkdir -p "$here/build"
g++ -std=c++17 -O2 -fPIC -shared -fvisibility=hidden -Wall -Wextra \
  -I"$work/include" -I"$work/ggml/include" \
  -o "$out.tmp" "$src" -ldl || skip "g++ failed"
mv "$out.tmp" "$out"
echo "sequence-copy: built $out"
