"""ArviZ's once-a-day import announcement (a FutureWarning) is kept out of the output;
a fresh cache folder makes ArviZ announce, as on a user's first run of the day."""

import os
import subprocess
import sys


def _run(code: str, cache) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    return subprocess.run([sys.executable, "-W", "error::FutureWarning", "-c", code], capture_output=True,
                          text=True, env=env, timeout=300)


def test_import_arviz_is_quiet(tmp_path):
    bare = _run("import arviz", tmp_path / "a")
    assert bare.returncode != 0 and "major refactor" in bare.stderr  # the cause, seen
    ours = _run("from rths_ident.estimators.offline._arviz import import_arviz; import_arviz()", tmp_path / "b")
    assert ours.returncode == 0, ours.stderr
