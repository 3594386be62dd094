"""What the install has (rths_ident.extras): a missing extra, or OpenSeesPy without its
system BLAS/LAPACK, is one line before any work, from every command that needs it;
and every third-party module the package imports is a declared dependency (the core,
or an extra asked for through rths_ident.extras)."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest

from rths_ident import extras
from rths_ident.cli import main
from rths_ident.errors import MissingExtra

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = ROOT / "src" / "rths_ident"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

CLUSTER_LINE = "needs the 'cluster' extra: pip install 'rths_ident[cluster]'"
LOADER_ERROR = "libblas.so.3: cannot open shared object file: No such file or directory"


def _requirement_name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0).lower().replace("_", "-")


@pytest.fixture
def without_cluster(monkeypatch):
    """Dask absent, as in a core install (a None in sys.modules: neither found nor importable)."""
    for module in extras.EXTRAS["cluster"].modules:
        monkeypatch.setitem(sys.modules, module, None)


@pytest.fixture
def opensees_without_blas(monkeypatch):
    """OpenSeesPy installed, its system BLAS missing: the import fails as OpenSeesPy's
    Linux wheel fails (its RuntimeError over the loader's ImportError)."""
    real_import = importlib.import_module

    def failing_import(name, *args, **kwargs):
        if name.startswith("openseespy"):
            try:
                raise ImportError(LOADER_ERROR)
            except ImportError:
                raise RuntimeError("Failed to import openseespy on Linux.")  # noqa: B904 - as OpenSeesPy does
        return real_import(name, *args, **kwargs)

    extras._import_opensees.cache_clear()
    monkeypatch.setattr(importlib, "import_module", failing_import)
    yield
    extras._import_opensees.cache_clear()


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# ------------------------------------------------------------------------- the helper

def test_require_names_the_asking_option_the_extra_and_the_install_line(without_cluster):
    assert not extras.has("cluster")
    with pytest.raises(MissingExtra) as caught:
        extras.require("cluster", "--dask local")
    assert str(caught.value) == f"--dask local: {CLUSTER_LINE}"
    assert isinstance(caught.value, ImportError)


def test_require_passes_when_installed():
    pytest.importorskip("distributed")
    assert extras.has("cluster")
    extras.require("cluster", "--dask local")  # no error


def test_opensees_without_system_blas_says_which_packages(opensees_without_blas):
    with pytest.raises(MissingExtra) as caught:
        extras.opensees("--ns opensees")
    assert str(caught.value) == (f"--ns opensees: OpenSeesPy cannot load its system libraries ({LOADER_ERROR}): "
                                 "on Debian/Ubuntu apt-get install libblas3 liblapack3")


def test_the_extras_are_the_projects_optional_dependencies():
    optional = PYPROJECT["optional-dependencies"]
    assert set(extras.EXTRAS) == set(optional) - {"test", "all"}
    assert set(optional["all"]) == {f"rths_ident[{name}]" for name in extras.EXTRAS}
    for name, extra in extras.EXTRAS.items():
        declared = set()
        for requirement in optional[name]:
            declared.add(_requirement_name(requirement))
            declared.update(re.findall(r"\[([^\]]+)\]", requirement)[0].split(",") if "[" in requirement else [])
        assert set(extra.modules) <= declared, (name, extra.modules, declared)


# ------------------------------------------------------------- every import is declared

def _third_party_imports() -> dict[str, set[str]]:
    """{top-level module: files importing it} over src/rths_ident (import statements and
    importlib calls with a literal name), stdlib and the package excluded."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE_DIR.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("import_module", "find_spec")
                  and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                names = [node.args[0].value]  # importlib.import_module("openseespy.opensees")
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != "rths_ident" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(str(path.relative_to(PACKAGE_DIR)))
    return found


def test_every_third_party_import_is_a_core_dependency_or_an_asked_for_extra():
    core = {_requirement_name(r) for r in PYPROJECT["dependencies"]}
    extra_modules = {module: name for name, extra in extras.EXTRAS.items() for module in extra.modules}
    distributions = importlib.metadata.packages_distributions()
    imports = _third_party_imports()
    assert {"jax", "numpy", "openseespy", "control", "numpyro", "arviz", "filterpy", "distributed"} <= set(imports)
    undeclared = {}
    for module, files in imports.items():
        if module in extra_modules:
            continue  # asked for through extras.require (the next test)
        names = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        if not names & core:
            undeclared[module] = sorted(files)
    assert not undeclared, f"imported, but neither a core dependency nor an extra: {undeclared}"


def test_modules_of_an_extra_are_imported_only_where_the_extra_is_asked_for():
    """dask/distributed appear in one module, which asks extras.require before use."""
    imports = _third_party_imports()
    for name, extra in extras.EXTRAS.items():
        for module in extra.modules:
            for file in imports.get(module, ()):
                text = (PACKAGE_DIR / file).read_text(encoding="utf-8")
                assert f'extras.require("{name}"' in text, f"{file} imports {module} without asking for '{name}'"


# -------------------------------------------------- the commands: one line, before work

@pytest.fixture
def no_work(monkeypatch):
    """Any run, study, benchmark figure or server fails the test: the check comes first."""
    from rths_ident.cli import bench
    from rths_ident.runner import run
    from rths_ident.scenarios import study
    from rths_ident.transport import ns_server

    def forbidden(*args, **kwargs):
        raise AssertionError("work started before the install was checked")

    for module, name in ((run, "run_test"), (study, "run_study"), (bench, "machine"), (ns_server, "NSServer")):
        monkeypatch.setattr(module, name, forbidden)


@pytest.mark.parametrize("argv, asked_by", [
    (["run", "marths", "--dask", "local"], "--dask local"),
    (["run", "marths", "--dask", "tcp://127.0.0.1:8786", "--record", "all"], "--dask tcp://127.0.0.1:8786"),
    (["check", "marths", "--dask", "local"], "--dask local"),
    (["study", "lugre-frame", "--vary", "compensation.kind=damb,amb", "--dask", "local"], "--dask local"),
    (["bench", "--only", "batch"], "bench: the local Dask cluster figure (--no-cluster skips it)"),
    (["bench"], "bench: the local Dask cluster figure (--no-cluster skips it)"),
])
def test_commands_without_the_cluster_extra_say_so_in_one_line(without_cluster, no_work, capsys, argv, asked_by):
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert _one_line(captured.err) == f"rths-ident: error: {asked_by}: {CLUSTER_LINE}"
    assert captured.out == ""


@pytest.mark.parametrize("argv, asked_by", [
    (["run", "rc-frame", "--ns", "opensees"], "--ns opensees"),
    (["run", "rc-frame", "--ns", "opensees-tcp"], "--ns opensees-tcp"),  # its server would start here
    (["check", "rc-frame", "--ns", "opensees", "--ns-model", "nonlinear"], "--ns opensees"),
    (["run", "bw-frame", "--ns", "opensees"], "--ns opensees"),
    (["serve", "ns", "--port", "0", "--once"], "serve ns"),
    (["bench", "--only", "opensees"], "bench --only opensees"),
])
def test_commands_without_opensees_system_libraries_say_so_in_one_line(opensees_without_blas, no_work, capsys,
                                                                       argv, asked_by):
    assert main(argv) == 1
    line = _one_line(capsys.readouterr().err)
    assert line == (f"rths-ident: error: {asked_by}: OpenSeesPy cannot load its system libraries ({LOADER_ERROR}): "
                    "on Debian/Ubuntu apt-get install libblas3 liblapack3")


def test_a_remote_opensees_ns_needs_no_opensees_here(opensees_without_blas, capsys):
    """--ns opensees-tcp with an address: the OpenSees model runs in the server's process."""
    assert main(["check", "rc-frame", "--ns", "opensees-tcp", "--ns-address", "127.0.0.1:8090"]) == 0
    assert "a valid rc-frame test" in capsys.readouterr().out
