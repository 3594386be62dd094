#!/usr/bin/env bash
# The package as a user installs it, in a fresh venv outside the repository:
#  1. python -m build: the sdist, then the wheel built from it;
#  2. a new venv with that wheel alone (the core install: no extras, no -e), and every
#     rths-ident command and README example run there (scripts/smoke_commands.py): each
#     works, or prints its one line naming the extra it needs;
#  3. the same install on a Linux without OpenSeesPy's system BLAS/LAPACK (the library
#     folder hidden in a mount namespace: root only, else said and skipped): the commands
#     that run OpenSeesPy here print their one line;
#  4. the 'cluster' extra added, and the commands that needed it run again;
#  5. the sdist installed over the wheel (pip builds it), and the flagship run from it.
# Usage: bash scripts/smoke_install.sh   (CI runs it: .ci/run)
#   SMOKE_FULL=1 also runs the cases CI leaves out for time (smoke_commands.py --full);
#   SMOKE_OUTCOMES=DIR keeps each install's outcomes there (core.json, core-without-blas.json,
#   cluster.json; docs/scripts/install_table.py writes docs/install.md's table from them).
set -euo pipefail
source "$(dirname "$0")/_setup_env.sh"  # system BLAS/LAPACK, and .venv with `build`
cd "$repo_root"
work="$(mktemp -d "${TMPDIR:-/tmp}/rths-smoke.XXXXXX")"
trap 'rm -rf "$work"' EXIT
outcomes="${SMOKE_OUTCOMES:-$work/outcomes}"
mkdir -p "$outcomes"
outcomes="$(cd "$outcomes" && pwd)"

quiet() {  # run "$@" with its output in a log, shown if it fails
  local log="$work/$1.log"; shift
  "$@" >"$log" 2>&1 || { tail -40 "$log"; echo "[smoke] failed: $*" >&2; return 1; }
}

smoke_start=$SECONDS
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
smoke=("$work/venv/bin/python" "$repo_root/scripts/smoke_commands.py" --repo "$repo_root")
if [ "${SMOKE_FULL:-0}" = "1" ]; then smoke+=(--full); fi
"${smoke[@]}" --install core --outcomes "$outcomes/core.json"

blas_dir=/usr/lib/x86_64-linux-gnu/blas  # where Debian/Ubuntu's libblas3 keeps libblas.so.3
if [ "$(id -u)" = "0" ] && [ -d "$blas_dir" ] && unshare -m true 2>/dev/null; then
  mkdir "$work/empty"
  # shellcheck disable=SC2016  # the inner shell's $0 (the folder to hide), $1 (an empty one), the rest: the command
  unshare -m sh -c 'mount --bind "$1" "$0" && shift && exec "$@"' "$blas_dir" "$work/empty" \
    "${smoke[@]}" --install core-without-blas --only-differing --outcomes "$outcomes/core-without-blas.json"
else
  echo "[smoke] core-without-blas: skipped (hiding $blas_dir needs root and a mount namespace)"
fi

start=$SECONDS
quiet cluster-install "$work/venv/bin/python" -m pip install "${wheel}[cluster]"
echo "[smoke] + the 'cluster' extra (pip install '$(basename "$wheel")[cluster]') in $((SECONDS - start)) s"
"${smoke[@]}" --install cluster --only-differing --outcomes "$outcomes/cluster.json"

start=$SECONDS
quiet sdist-install "$work/venv/bin/python" -m pip install --force-reinstall --no-deps "$sdist"
quiet sdist-flagship "$work/venv/bin/rths-ident" run lugre-frame --duration 2 --quiet --json sdist-flagship.json
echo "[smoke] pip install $(basename "$sdist") (built by pip) and run lugre-frame from it in $((SECONDS - start)) s"
echo "[smoke] done in $((SECONDS - smoke_start)) s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
