#!/usr/bin/env bash
# The package as a user installs it, in a fresh venv outside the repository:
#  1. python -m build: the sdist, then the wheel built from it;
#  2. a new venv with that wheel alone (the core install: no extras, no -e), and every
#     rths-ident command and README example run there (scripts/smoke_commands.py): each
#     works, or prints its one line naming the extra it needs;
#  3. the 'cluster' extra added, and the commands that needed it run again.
# Usage: bash scripts/smoke_install.sh   (CI runs it: .ci/run)
set -euo pipefail
source "$(dirname "$0")/_setup_env.sh"  # system BLAS/LAPACK, and .venv with `build`
cd "$repo_root"
work="$(mktemp -d "${TMPDIR:-/tmp}/rths-smoke.XXXXXX")"
trap 'rm -rf "$work"' EXIT

quiet() {  # run "$@" with its output in a log, shown if it fails
  local log="$work/$1.log"; shift
  "$@" >"$log" 2>&1 || { tail -40 "$log"; echo "[smoke] failed: $*" >&2; return 1; }
}

start=$SECONDS
quiet build python -m build --outdir "$work/dist" "$repo_root"
wheel="$(ls "$work"/dist/rths_ident-*.whl)"
sdist="$(ls "$work"/dist/rths_ident-*.tar.gz)"
echo "[smoke] python -m build: $(basename "$sdist") and $(basename "$wheel") in $((SECONDS - start)) s"

start=$SECONDS
quiet venv python -m venv "$work/venv"
quiet core-install "$work/venv/bin/python" -m pip install "$wheel"
echo "[smoke] a fresh venv with the core install (pip install $(basename "$wheel")) in $((SECONDS - start)) s"

mkdir "$work/run"
cd "$work/run"  # outside the repository: the package comes from the venv
export RTHS_IDENT_JAX_CACHE="$work/jax-cache" MPLBACKEND=Agg
"$work/venv/bin/python" "$repo_root/scripts/smoke_commands.py" --install core --repo "$repo_root"

start=$SECONDS
quiet cluster-install "$work/venv/bin/python" -m pip install "${wheel}[cluster]"
echo "[smoke] + the 'cluster' extra (pip install '$(basename "$wheel")[cluster]') in $((SECONDS - start)) s"
"$work/venv/bin/python" "$repo_root/scripts/smoke_commands.py" --install cluster --repo "$repo_root" --only-differing
