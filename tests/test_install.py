"""A non-editable install: build the wheel, install it into a fresh virtualenv, and run the installed
`codeqa` on the fixture repository (queries/ and the UI page must come from the wheel, not a checkout).

Nothing is downloaded: the wheel is built without build isolation, installed with --no-index and
--no-deps, and the new environment reaches the test environment's dependencies through a .pth line
(written after the install, so pip never sees the checkout's own editable codeqa there).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import copy_fixture_repo

ROOT = Path(__file__).resolve().parent.parent
# What setuptools prints when the package layout is declared wrongly (data folders as packages, ...).
PACKAGING_WARNING = re.compile(r"Setuptools\w*Warning|BuildBackendWarning|absent from the `packages`|as data is deprecated")


def _source_copy(dest: Path) -> Path:
    """The files a wheel is built from, copied so the build's egg-info and build/ stay out of the checkout."""
    dest.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    for folder in ("codeqa", "queries", "ui"):
        shutil.copytree(ROOT / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> tuple[Path, str]:
    work = tmp_path_factory.mktemp("wheel")
    source = _source_copy(work / "src")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-index", "--no-build-isolation",
                            "-w", str(work / "dist"), str(source)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (whl,) = (work / "dist").glob("codeqa-*.whl")
    return whl, built.stdout + built.stderr


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv with the wheel installed; returns its bin/ folder."""
    env_dir = tmp_path_factory.mktemp("venv") / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                           str(wheel[0])], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    site_packages = Path(subprocess.check_output([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                                 text=True).strip())
    (site_packages / "test-dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return env_dir / "bin"


def _clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return env


def test_the_wheel_builds_without_packaging_warnings_and_holds_every_module_query_and_page(wheel):
    whl, log = wheel
    assert not PACKAGING_WARNING.findall(log), [line for line in log.splitlines() if PACKAGING_WARNING.search(line)][:5]
    names = set(zipfile.ZipFile(whl).namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "codeqa").rglob("*.py") if "__pycache__" not in p.parts}
    assert modules and modules <= names, modules - names  # sub-packages are discovered, not listed by hand
    queries = {"codeqa/" + p.relative_to(ROOT).as_posix() for p in (ROOT / "queries").rglob("*.scm")}
    assert len(queries) > 20 and queries <= names, queries - names
    assert {"codeqa/ui/app.py", "codeqa/ui/answer_view.py", "codeqa/queries/README.md"} <= names
    assert any(n.startswith("codeqa/adapters/") and n.endswith(".safetensors") for n in names)
    assert not any(n.startswith(("queries/", "ui/", "tests/")) for n in names)  # nothing lands top-level


def test_the_installed_codeqa_indexes_and_answers_from_its_own_files(installed, tmp_path):
    cwd = tmp_path / "elsewhere"  # not the checkout: `import codeqa` must find the installed one
    cwd.mkdir()
    env = _clean_env(tmp_path)
    where = subprocess.run([str(installed / "python"), "-c",
                            "import codeqa, codeqa.ui, codeqa.languages as l; "
                            "print(codeqa.__file__); print(l.queries_dir()); print(codeqa.ui.__path__[0])"],
                           cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert where.returncode == 0, where.stderr
    env_root = installed.parent.resolve()
    for line in where.stdout.split():
        assert env_root in Path(line).resolve().parents, line  # the module, queries/ and the page: all from the wheel
    assert (Path(where.stdout.split()[2]) / "app.py").is_file()

    repo = copy_fixture_repo(tmp_path / "repo")
    index = subprocess.run([str(installed / "codeqa"), "index", str(repo), "--json"], cwd=cwd, env=env,
                           capture_output=True, text=True, timeout=600)
    assert index.returncode == 0, index.stderr[-3000:]
    summary = json.loads(index.stdout)
    assert summary["files"] == 13 and summary["symbols"] > 15 and summary["chunks"] > 0
    assert Path(summary["index_dir"]).is_relative_to(tmp_path / "cache")

    refs = subprocess.run([str(installed / "codeqa"), "refs", "EncoderClass", "--repo", str(repo), "--json"], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)
    assert refs.returncode == 0, refs.stderr[-3000:]
    result = json.loads(refs.stdout)
    assert [d["path"] for d in result["definitions"]] == ["encoders/encoder.py"]
    assert ("app/main.py", 7, "instantiation") in {(r["path"], r["line"], r["kind"]) for r in result["references"]}
