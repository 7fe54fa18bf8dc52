"""What a user sees on PyPI: every sdist and wheel carries the licence, URLs and the classifiers we test."""

from __future__ import annotations

import email.parser
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

from support.shared import built_distributions

pytestmark = pytest.mark.slow  # started first on the parallel workers (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file())


def _pythons_under_test() -> set[str]:
    """The Python versions of the CI test matrix: the only ones a classifier may claim."""
    ci = yaml.safe_load((ROOT / ".github/workflows/ci.yml").read_text())
    return {str(v) for v in ci["jobs"]["tests"]["strategy"]["matrix"]["python-version"]}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every sdist and wheel, built once per run (shared with the other tests that install them)."""
    return built_distributions(tmp_path_factory)


def wheel_metadata(wheel: Path) -> tuple[email.message.Message, list[str]]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [meta] = [n for n in names if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(archive.read(meta).decode()), names


def test_every_package_ships_the_repository_licence() -> None:
    licence = (ROOT / "LICENSE").read_text()
    assert licence.startswith("MIT License")
    for folder in FOLDERS:
        assert (ROOT / "packages" / folder / "LICENSE").read_text() == licence, folder


@pytest.mark.parametrize("folder", FOLDERS)
def test_built_metadata(dist: Path, folder: str) -> None:
    project = tomllib.loads((ROOT / "packages" / folder / "pyproject.toml").read_text())["project"]
    stem = project["name"].replace("-", "_")
    [wheel] = dist.glob(f"{stem}-{project['version']}-*.whl")
    [sdist] = dist.glob(f"{stem}-{project['version']}.tar.gz")
    meta, names = wheel_metadata(wheel)

    assert meta["Name"] == project["name"]
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    with tarfile.open(sdist) as archive:
        names_in_sdist = archive.getnames()
    assert f"{stem}-{project['version']}/LICENSE" in names_in_sdist
    assert f"{stem}-{project['version']}/CHANGELOG.md" in names_in_sdist  # uv_build's source-include

    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert {"Homepage", "Source", "Changelog", "Issues"} <= set(urls)
    assert urls["Changelog"].endswith(f"/packages/{folder}/CHANGELOG.md")

    classifiers = meta.get_all("Classifier")
    assert sum(c.startswith("Development Status ::") for c in classifiers) == 1
    pythons = {
        c.rsplit(" :: ", 1)[1] for c in classifiers if c.startswith("Programming Language :: Python :: 3.")
    }
    assert pythons == _pythons_under_test()
    assert (
        meta["Requires-Python"]
        == f">={min(_pythons_under_test(), key=lambda v: tuple(map(int, v.split('.'))))}"
    )
