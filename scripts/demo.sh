#!/usr/bin/env bash
# Set up (system libs + .venv) and run the flagship online model-updating hybrid simulation.
# Writes metrics (out/lugre-frame/metrics.json) and plots (out/lugre-frame/*.png).
set -euo pipefail
source "$(dirname "$0")/_setup_env.sh"
cd "$repo_root"
mkdir -p out  # the commands create one folder level only (--plots), never a tree
rths-ident run lugre-frame --record elcentro_1940 --updating rls --engine fused \
  --json out/lugre-frame/metrics.json --plots out/lugre-frame "$@"
