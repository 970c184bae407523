"""The documentation keeps up with the code: every setting is documented, README stays a door.

The site itself is built with ``mkdocs build --strict`` in CI, which fails on a broken link
or anchor between its pages; these tests hold what mkdocs does not see: README (outside the
site), the generated settings table, and names the code reads that no page mentions.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
README = REPO / "README.md"
README_MAX_LINES = 150
NAME = re.compile(r"\bDURABENCH_[A-Z0-9_]*[A-Z0-9]\b")
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.fixture(scope="module")
def settings_doc() -> ModuleType:
    spec = importlib.util.spec_from_file_location("settings_doc", REPO / "scripts/settings_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub and mkdocs' default both make it (for plain headings)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return {_slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def _tracked_code() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    return [REPO / name for name in listed if not name.endswith(".md")]


def test_the_settings_table_is_generated_from_the_settings_code(settings_doc: ModuleType) -> None:
    page = (DOCS / "settings.md").read_text()
    assert page == settings_doc.page_with_table(page), (
        "docs/settings.md's table is out of date: run python scripts/settings_doc.py"
    )


def test_every_setting_field_is_a_row_of_the_settings_page(settings_doc: ModuleType) -> None:
    from durabench.settings.values import Settings

    page = (DOCS / "settings.md").read_text()
    for name in Settings.model_fields:
        assert f"| `{settings_doc.variable(name)}` |" in page


def test_every_durabench_variable_the_code_names_is_on_the_settings_page() -> None:
    documented = set(NAME.findall((DOCS / "settings.md").read_text()))
    named: dict[str, Path] = {}
    for path in _tracked_code():
        if path.is_file():
            for name in NAME.findall(path.read_text(errors="replace")):
                named.setdefault(name, path)
    assert named, "no DURABENCH_ name found: the scan is broken"
    missing = {
        name: str(path.relative_to(REPO)) for name, path in named.items() if name not in documented
    }
    assert not missing, f"say what these do in docs/settings.md: {missing}"


def test_readme_is_a_door_not_the_house() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) < README_MAX_LINES, (
        f"README.md has {len(lines)} lines; the reference belongs in docs/ (under "
        f"{README_MAX_LINES})"
    )


def test_readme_links_reach_files_and_headings_that_exist() -> None:
    links = LINK.findall(README.read_text())
    local = [link for link in links if "://" not in link and not link.startswith("mailto:")]
    assert any(link.startswith("docs/") for link in local), "README links into no docs page"
    for link in local:
        target, _, anchor = link.partition("#")
        path = REPO / target if target else README
        assert path.exists(), f"README links to {link}, which does not exist"
        if anchor and path.suffix == ".md":
            assert anchor in _anchors(path), f"README links to {link}: no such heading"


def test_the_command_is_written_one_way_and_readme_says_once_which_is_which() -> None:
    import tomllib

    from starter.verbs import VERBS

    verbs = "|".join(re.escape(v) for v in VERBS)
    # a command: in backticks, or a line of a code block (prose says "a durabench run")
    installed = re.compile(rf"(?:`|^\s*|\$ )durabench (?:{verbs})(?=[\s`]|$)", re.MULTILINE)
    pages = [*DOCS.glob("*.md"), REPO / "bench" / "README.md", README]
    spelled = {p.name: len(installed.findall(p.read_text())) for p in pages}
    said = "(`durabench run ...` = `python -m starter run ...`)"
    assert README.read_text().count(said) == 1, "README says which is which, once"
    assert {name: n for name, n in spelled.items() if n} == {"README.md": 1}, spelled
    assert sum("python -m starter " in p.read_text() for p in pages) > 10
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"durabench": "starter.main:main"}
    assert "from starter.main import main" in (REPO / "starter" / "__main__.py").read_text()


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_each_page_opens_with_its_one_title(page: Path) -> None:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    assert text.startswith("# "), f"{page.name} does not open with a '# Title'"
    assert len(re.findall(r"^# ", text, flags=re.M)) == 1, f"{page.name} has more than one title"
