#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` (CPU, Release) from the llama.cpp source that node-llama-cpp
# bundles, for the benchmark's peer comparison (`npm run bench -- --llama-server PATH`).
#   scripts/build-llama-server.sh [--kernels prebuilt|native] [jobs]     (defaults: prebuilt, 2 jobs)
#
# --kernels prebuilt (default): llama-server runs on node-llama-cpp's prebuilt libraries, the very
#   files Frontier's default engine loads (libllama, libggml, libggml-base and the libggml-cpu-<variant>
#   kernels ggml picks for this CPU). Only the server and llama.cpp's `common` code are compiled here
#   (no kernels: GGML_CPU=OFF, GGML_BACKEND_DL=ON); they call the same C API of the same commit.
#   Output: .llama-server/llama-server-prebuilt (a wrapper that points the loader at those files).
# --kernels native: everything compiled for this CPU (GGML_NATIVE=ON), to compare against a local
#   engine build (`npm run build:engine`). Output: .llama-server/build/bin/llama-server.
# Both are git-ignored and take a while on 2 cores (~10-25 minutes).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bundle="$root/node_modules/node-llama-cpp/llama/gitRelease.bundle"
dir="$root/.llama-server"
kernels=prebuilt
if [ "${1:-}" = "--kernels" ]; then
  kernels="${2:-}"
  shift 2
fi
jobs="${1:-2}"
case "$kernels" in prebuilt | native) ;; *)
  echo "--kernels must be prebuilt or native, got '$kernels'" >&2
  exit 2
  ;;
esac
[ -f "$bundle" ] || { echo "missing $bundle (run npm install)" >&2; exit 1; }
mkdir -p "$dir"
if [ ! -d "$dir/src/.git" ]; then
  rm -rf "$dir/src"
  git clone --quiet "$bundle" "$dir/src"
fi
common=(-DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON)

if [ "$kernels" = native ]; then
  cmake -S "$dir/src" -B "$dir/build" "${common[@]}" -DGGML_NATIVE=ON >/dev/null
  cmake --build "$dir/build" --config Release --target llama-server -j "$jobs"
  echo "$dir/build/bin/llama-server"
  exit 0
fi

prebuilt="$(ls -d "$root"/node_modules/@node-llama-cpp/linux-x64/bins/*/ 2>/dev/null | head -1)"
[ -n "$prebuilt" ] && [ -f "$prebuilt/libllama.v0.4.0.so" ] || {
  echo "node-llama-cpp's prebuilt linux-x64 libraries not found (or not the expected release) under node_modules/@node-llama-cpp/linux-x64" >&2
  exit 1
}
cmake -S "$dir/src" -B "$dir/build-prebuilt" "${common[@]}" -DBUILD_SHARED_LIBS=ON -DGGML_BACKEND_DL=ON \
  -DGGML_CPU=OFF -DGGML_NATIVE=OFF >/dev/null
cmake --build "$dir/build-prebuilt" --config Release --target llama-server -j "$jobs"

# The loader's view: this build's sonames name the prebuilt files; the CPU kernels sit next to the
# executable, where ggml looks for backends (/proc/self/exe's directory, so a copy, not a link).
peer="$dir/prebuilt-peer"
rm -rf "$peer"
mkdir -p "$peer"
cp "$dir/build-prebuilt/bin/llama-server" "$peer/llama-server"
ln -s "$prebuilt/libllama.v0.4.0.so" "$peer/libllama.so.0"
ln -s "$prebuilt/libggml.v0.4.0.so" "$peer/libggml.so.0"
ln -s "$prebuilt/libggml-base.so" "$peer/libggml-base.so.0"
for kernel in "$prebuilt"/libggml-cpu-*.so; do ln -s "$kernel" "$peer/"; done
cat >"$dir/llama-server-prebuilt" <<'WRAPPER'
#!/usr/bin/env bash
# llama-server on node-llama-cpp's prebuilt llama.cpp libraries (scripts/build-llama-server.sh).
peer="$(cd "$(dirname "$0")" && pwd)/prebuilt-peer"
LD_LIBRARY_PATH="$peer${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$peer/llama-server" "$@"
WRAPPER
chmod +x "$dir/llama-server-prebuilt"
echo "$dir/llama-server-prebuilt"
