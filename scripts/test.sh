#!/usr/bin/env bash
# Set up (system libs + .venv) and run the whole test suite: bash scripts/test.sh [pytest args]
# Two stages, each with its own summary:
#  1. every test but the live page's browser tests, on RTHS_TEST_WORKERS pytest-xdist workers
#     (default 2, a CI machine's cores; 0 runs them in this process);
#  2. the browser tests (marker `browser`) alone in one process: each paces a real-time run and
#     drives Chromium, and beside a second worker a page once missed its 180 s wait.
# A stage that selects no test (e.g. `bash scripts/test.sh tests/estimators`) is not a failure.
# To choose tests by marker yourself, call `python -m pytest -m ...` directly.
set -euo pipefail
source "$(dirname "$0")/_setup_env.sh"
cd "$repo_root"

run_stage() {  # run_stage ARGS...: pytest's status, with "no tests collected" (5) as success
  local status=0
  python -m pytest "$@" || status=$?
  if [ "$status" = "5" ]; then status=0; fi
  return "$status"
}

stage_1=0
run_stage -n "${RTHS_TEST_WORKERS:-2}" -m "not browser" "$@" || stage_1=$?
stage_2=0
run_stage -p no:xdist -m browser "$@" || stage_2=$?
if [ "$stage_1" != "0" ]; then exit "$stage_1"; fi
exit "$stage_2"
