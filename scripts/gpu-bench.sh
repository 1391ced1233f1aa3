#!/usr/bin/env bash
# The benchmark on an NVIDIA GPU host (never needed on CPU machines; CI does not run it).
#   scripts/gpu-bench.sh [extra `npm run bench` options]
# 1. installs node-llama-cpp's prebuilt CUDA engine, the same version as node-llama-cpp (not saved
#    to package.json / the lockfile);
# 2. generates the `large` random-weight model (~0.8B parameters, 1.5 GB; once, cached in .models/);
# 3. runs `npm run bench` with the whole model offloaded (FRONTIER_GPU=auto: node-llama-cpp picks
#    CUDA when its build loads; llama.cpp offloads every layer that fits, i.e. all of this model) and
#    longer contexts, and writes docs/bench/gpu-report.md (docs/benchmarks.md is left alone).
# Needs: an NVIDIA driver (nvidia-smi). The prebuilt CUDA binaries bring their CUDA runtime in
# @node-llama-cpp/linux-x64-cuda-ext; if they fail to load, node-llama-cpp's error says what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvidia-smi >/dev/null || { echo "no nvidia-smi: this script is for NVIDIA GPU hosts" >&2; exit 1; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

version="$(node -p 'require("./node_modules/node-llama-cpp/package.json").version')"
npm install --no-save --no-audit --no-fund \
  "@node-llama-cpp/linux-x64-cuda@${version}" "@node-llama-cpp/linux-x64-cuda-ext@${version}"
# Shows which GPU build node-llama-cpp finds (and why not, when it cannot load the CUDA one).
npx --no-install node-llama-cpp inspect gpu

npx tsx native/model/cli.ts --size large

export FRONTIER_GPU=auto FRONTIER_THREADS="${FRONTIER_THREADS:-4}" FRONTIER_FLASH_ATTENTION="${FRONTIER_FLASH_ATTENTION:-on}"
npm run bench -- --size large --contexts 4000,16000,32000 --restore-tokens 16000 --agent-prefix 20000 \
  --reps 3 --out docs/bench/gpu-report.md "$@"
