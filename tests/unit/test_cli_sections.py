"""``-h`` lists the verbs in sections (run control, results, operations), each verb once."""

from __future__ import annotations

import re
from collections import Counter

from click.testing import CliRunner

from starter.main import cli
from starter.verbs import SECTIONS, VERBS, LazyGroup, Verb


def test_every_verb_is_in_exactly_one_section() -> None:
    placed = Counter(name for names in SECTIONS.values() for name in names)
    assert set(placed) == set(VERBS), set(placed) ^ set(VERBS)
    assert not [name for name, count in placed.items() if count > 1]
    assert list(SECTIONS) == ["Run control", "Results", "Operations"]


def _sections(text: str) -> dict[str, list[str]]:
    """Each ``Title:`` section of a help text, to the verbs listed in it."""
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if re.fullmatch(r"[A-Z][\w ]+:", line):
            current = line[:-1]
            found[current] = []
        elif current and (row := re.match(r"  (\S+)  ", line)):
            found[current].append(row.group(1))
    return found


def test_help_shows_each_verb_under_its_section() -> None:
    result = CliRunner().invoke(cli, ["-h"])
    assert result.exit_code == 0, result.output
    shown = _sections(result.output)
    for title, names in SECTIONS.items():
        assert shown[title] == list(names), title
    assert "Commands" not in shown and "Other commands" not in shown


def test_a_verb_without_a_section_is_still_listed() -> None:
    verbs = {**VERBS, "extra": Verb("starter.no_such_module:extra", "An extra verb.")}
    result = CliRunner().invoke(LazyGroup(name="cli", verbs=verbs), ["--help"])
    assert _sections(result.output)["Other commands"] == ["extra"]
