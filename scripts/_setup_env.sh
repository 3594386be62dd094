#!/usr/bin/env bash
# Shared set-up for scripts/test.sh and scripts/demo.sh (sourced, not run).
# 1. System BLAS/LAPACK that OpenSeesPy's Linux wheel links against.
# 2. Debian's chromium for the live page's browser tests.
# 3. A virtual environment in .venv with rths_ident and its test/extra dependencies.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RTHS_VENV:-$repo_root/.venv}"
python_bin="${PYTHON:-python3}"

have_lapack() { ldconfig -p 2>/dev/null | grep -q 'liblapack\.so\.3' && ldconfig -p 2>/dev/null | grep -q 'libblas\.so\.3'; }
if ! have_lapack; then
  echo "[setup] installing system BLAS/LAPACK for OpenSeesPy (libblas3 liblapack3)"
  if [ "$(id -u)" = "0" ]; then apt_cmd=(apt-get); elif command -v sudo >/dev/null; then apt_cmd=(sudo apt-get); else apt_cmd=(); fi
  if [ ${#apt_cmd[@]} -gt 0 ] && command -v apt-get >/dev/null; then
    "${apt_cmd[@]}" update -qq
    DEBIAN_FRONTEND=noninteractive "${apt_cmd[@]}" install -y -qq libblas3 liblapack3
  else
    echo "[setup] WARNING: cannot install libblas3/liblapack3 (no apt-get or no root); OpenSeesPy features will be unavailable" >&2
  fi
fi

# 2. Debian's headless Chromium for the live page's browser tests (tests/live/test_browser.py,
#    driven by Playwright with executable_path: Playwright never downloads a browser here).
#    RTHS_SKIP_CHROMIUM=1 skips it (those tests then skip, saying why). RTHS_REQUIRE_BROWSER=1
#    (.ci/run sets it) makes a Chromium that cannot be installed an error here and in the tests.
if [ "${RTHS_SKIP_CHROMIUM:-0}" != "1" ] && ! command -v chromium >/dev/null; then
  if [ "$(id -u)" = "0" ]; then apt_cmd=(apt-get); elif command -v sudo >/dev/null; then apt_cmd=(sudo apt-get); else apt_cmd=(); fi
  if [ ${#apt_cmd[@]} -gt 0 ] && command -v apt-get >/dev/null; then
    echo "[setup] installing Debian's chromium for the live page's browser tests"
    "${apt_cmd[@]}" update -qq || true
    DEBIAN_FRONTEND=noninteractive "${apt_cmd[@]}" install -y -qq chromium >/dev/null \
      || echo "[setup] WARNING: could not install chromium; the browser tests will be skipped" >&2
  else
    echo "[setup] WARNING: cannot install chromium (no apt-get or no root); the browser tests will be skipped" >&2
  fi
fi
if [ "${RTHS_REQUIRE_BROWSER:-0}" = "1" ] && ! command -v chromium >/dev/null; then
  echo "[setup] ERROR: RTHS_REQUIRE_BROWSER=1 and no chromium could be installed (apt-get install chromium)" >&2
  exit 1
fi

if [ ! -x "$venv/bin/python" ]; then
  echo "[setup] creating virtual environment $venv"
  "$python_bin" -m venv "$venv"
fi
stamp="$venv/.rths_ident_installed"
if [ ! -f "$stamp" ] || [ "$repo_root/pyproject.toml" -nt "$stamp" ]; then
  echo "[setup] installing rths_ident with its test dependencies (first time: a few minutes, JAX is large)"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q -e "$repo_root[test]"
  touch "$stamp"
fi
export PATH="$venv/bin:$PATH"
