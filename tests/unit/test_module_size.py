"""No module of the product is longer than 500 lines (STYLE: small files, one idea each).

A module near the cap grows past it in a merge nobody reads as a whole; the cap is
checked here, so a growing module is split when it grows, not noticed a wave later.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PARTS = ("durabench", "activities", "workflows", "runtime", "starter")
CAP = 500


def test_no_module_is_longer_than_the_cap() -> None:
    sources = [REPO / "worker.py", *(p for part in PARTS for p in (REPO / part).rglob("*.py"))]
    assert len(sources) > 100, "the tree was not found"
    long = {
        str(p.relative_to(REPO)): n
        for p in sources
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > CAP
    }
    assert long == {}, f"split these modules (at most {CAP} lines each): {long}"
