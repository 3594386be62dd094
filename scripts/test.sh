#!/usr/bin/env bash
# Set up (system libs + .venv) and run the whole test suite: bash scripts/test.sh [pytest args]
# in one process (RTHS_TEST_WORKERS=2: on two pytest-xdist workers; the live page's browser tests timed out once that way)
set -euo pipefail
source "$(dirname "$0")/_setup_env.sh"
cd "$repo_root"
python -m pytest -n "${RTHS_TEST_WORKERS:-0}" "$@"
