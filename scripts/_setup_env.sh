#!/usr/bin/env bash
# Shared set-up for scripts/test.sh and scripts/demo.sh (sourced, not run).
# 1. System BLAS/LAPACK that OpenSeesPy's Linux wheel links against.
# 2. A virtual environment in .venv with rths_ident and its test/extra dependencies.
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
