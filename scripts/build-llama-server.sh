#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` (CPU, Release) from the llama.cpp source that node-llama-cpp
# bundles, so the benchmark's peer comparison runs the same llama.cpp release Frontier uses.
# Output: .llama-server/build/bin/llama-server (git-ignored). Takes a while on 2 cores.
#   scripts/build-llama-server.sh [jobs]     (default jobs: 2)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bundle="$root/node_modules/node-llama-cpp/llama/gitRelease.bundle"
dir="$root/.llama-server"
jobs="${1:-2}"
[ -f "$bundle" ] || { echo "missing $bundle (run npm install)" >&2; exit 1; }
mkdir -p "$dir"
if [ ! -d "$dir/src/.git" ]; then
  rm -rf "$dir/src"
  git clone --quiet "$bundle" "$dir/src"
fi
cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_CUDA=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON >/dev/null
cmake --build "$dir/build" --config Release --target llama-server -j "$jobs"
echo "$dir/build/bin/llama-server"
