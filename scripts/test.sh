#!/usr/bin/env bash
# Set up (system libs + .venv) and run the whole test suite: bash scripts/test.sh [pytest args]
# on two pytest-xdist workers (RTHS_TEST_WORKERS=N for another number, 0 for one process)
set -euo pipefail
source "$(dirname "$0")/_setup_env.sh"
cd "$repo_root"
python -m pytest -n "${RTHS_TEST_WORKERS:-2}" "$@"
