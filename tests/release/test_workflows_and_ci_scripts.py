"""Workflow files parse and have the structure the release process relies on; the CI helper scripts work."""

from __future__ import annotations

import json

import yaml

from release.release_support import ROOT, script

WORKFLOWS = ROOT / ".github/workflows"


def load(name: str) -> dict:  # type: ignore[type-arg]
    data = yaml.safe_load((WORKFLOWS / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data  # type: ignore[no-any-return]


def test_every_job_has_steps_and_known_needs() -> None:
    for path in WORKFLOWS.glob("*.yml"):
        data = load(path.name)
        jobs = data["jobs"]
        for name, job in jobs.items():
            assert job["runs-on"] == "ubuntu-latest", (path.name, name)
            assert job["steps"], (path.name, name)
            needs = job.get("needs", [])
            for need in [needs] if isinstance(needs, str) else needs:
                assert need in jobs, (path.name, name, need)


def test_ci_tests_affected_packages_on_three_pythons_and_everything_on_main() -> None:
    ci = load("ci.yml")
    tests = ci["jobs"]["tests"]
    assert tests["strategy"]["matrix"]["python-version"] == ["3.11", "3.12", "3.13"]
    runs = [s.get("run", "") for s in tests["steps"]]
    assert any("needs.changes.outputs.test-paths" in r for r in runs)
    assert ".ci/run" in runs
    assert "affected_packages.py" in json.dumps(ci["jobs"]["changes"])
    assert "check_min_versions.py" in json.dumps(ci["jobs"]["min-versions"])


def test_release_uses_trusted_publishing_and_the_changelog() -> None:
    release = load("release.yml")
    assert release["on"]["push"]["tags"] == ["agents-a365-*==*"]
    assert "package" in release["on"]["workflow_dispatch"]["inputs"]
    publish = release["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"}
    assert any(s.get("uses", "").startswith("pypa/gh-action-pypi-publish") for s in publish["steps"])
    assert "password" not in json.dumps(publish)
    assert "secrets." not in json.dumps(release)
    assert "--notes" in json.dumps(release["jobs"]["github-release"])
    assert "check_min_versions.py" in json.dumps(release["jobs"]["test"])


def test_release_info_reads_tags_and_notes() -> None:
    done = script("release_info.py", "agents-a365-tooling-extensions-openai==0.1.0")
    assert done.stdout.split() == [
        "package=openai",
        "distribution=agents-a365-tooling-extensions-openai",
        "version=0.1.0",
    ]
    notes = script("release_info.py", "openai", "--notes")
    assert notes.returncode == 0
    assert "McpToolRegistrationService" in notes.stdout
    assert script("release_info.py", "agents-a365-runtime==9.9.9").returncode == 1


def affected(*files: str) -> dict:  # type: ignore[type-arg]
    done = script("affected_packages.py", "--files", *files)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_affected_packages() -> None:
    core = affected("packages/agents-a365-runtime/src/agents_a365/runtime/tokens.py")
    assert core["packages"] == ["runtime", "tooling", "langchain", "openai"]  # dependents, transitively
    ext = affected("packages/tooling-extensions-openai/src/x.py")
    assert ext["packages"] == ["openai"]
    assert ext["test_paths"] == ["tests/contract", "tests/openai"]
    docs = affected("docs/contract.md", "README.md")
    assert docs == {"full": False, "packages": [], "test_paths": ["tests/contract"]}  # contract always
    assert affected("uv.lock")["full"] is True
    assert affected("tests/langchain/test_x.py")["packages"] == ["langchain"]
