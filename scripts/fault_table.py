"""Run the fault harness and write its table (fault x step -> outcome) into the docs.

    python scripts/fault_table.py    # runs tests/workflows/test_fault_harness.py

Each case of the harness appends its row when ``DURABENCH_FAULT_TABLE`` names a file; the
table goes between the markers in docs/durability.md, with the commit it was taken at.
Only a run with no failed case is written: a table is the record of zero violations.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "durability.md"
BEGIN = "<!-- fault table: scripts/fault_table.py writes what follows -->"
END = "<!-- end of fault table -->"
LANES = ("baseline", "sourcegraph_full")


def run_harness(rows: Path) -> int:
    """Run every case of the harness, each appending its row to ``rows``."""
    env = {**os.environ, "DURABENCH_FAULT_TABLE": str(rows)}
    test = "tests/workflows/test_fault_harness.py"
    return subprocess.call(
        [sys.executable, "-m", "pytest", test, "-q", "-p", "no:logging"], env=env, cwd=REPO
    )


def table(rows: list[dict[str, str]], commit: str) -> str:
    """The Markdown table of the rows, in the harness's order."""
    lines = [
        BEGIN,
        f"Taken at `{commit}`: {len(rows)} cases, every invariant held in each.",
        "",
        "| step | fault | run | baseline lane | MCP lane |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lanes = " | ".join(r[lane] for lane in LANES)
        lines.append(f"| `{r['step']}` | {r['fault']} | {r['run']} | {lanes} |")
    return "\n".join([*lines, END])


def write_doc(text: str) -> None:
    """Put ``text`` between the markers of docs/durability.md."""
    doc = DOC.read_text()
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"{DOC} has no fault table markers ({BEGIN} ... {END}); add them")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(head + text + tail)


def main() -> int:
    """Run the harness; write its table if every case passed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows_file = Path(tmp) / "rows.jsonl"
        code = run_harness(rows_file)
        if code != 0:
            print("the harness failed: the table is left as it was", file=sys.stderr)
            return code
        rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    commit = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, text=True)
    write_doc(table(rows, commit.strip()))
    print(f"{len(rows)} cases written to {DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
