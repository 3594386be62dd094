#!/usr/bin/env bash
# Set up (system libs + .venv) and run the whole test suite: bash scripts/test.sh [pytest args]
set -euo pipefail
source "$(dirname "$0")/_setup_env.sh"
cd "$repo_root"
python -m pytest "$@"
