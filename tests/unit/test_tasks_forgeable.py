"""Tasks whose tests run the submission are flagged: their reward could be the submission's.

The verifier runs as root. A test that imports the agent's code (``sys.path`` or ``cd``
into the workspace) runs that code beside the reward file, and a submission can write
1.0 there while its code is wrong (issue 52, defect 7: the forge the threat model admits).
Until the tests run as another user, ``tasks check`` and the report name every such task.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from durabench.models.agent import AgentSpec
from durabench.models.results import RunResult
from durabench.models.run import RunRequest
from durabench.planning.plan import make_plan
from durabench.results.report import render_markdown
from durabench.results.report_html import render_html
from durabench.settings.values import Settings
from durabench.tasks import load_suite, load_task
from durabench.tasks.forgeable import runs_submission
from starter.tasks import tasks
from tests.unit.results_set import hand_result

MODEL = "claude-haiku-4-5"


def _task(root: Path, test_sh: str, **files: str) -> Path:
    texts = {
        "task.toml": "[task]\nid = 'x-1'\n",
        "instruction.md": "do it",
        "environment/Dockerfile": "FROM scratch",
        "tests/test.sh": test_sh,
        **{f"tests/{name}": text for name, text in files.items()},
    }
    for rel, text in texts.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_every_bundled_task_imports_the_submission_and_says_where() -> None:
    found = {t.task_id: t.runs_submission for t in load_suite("pytorch")}
    assert found["tensor-broadcast-001"] == (
        'tests/test_broadcast.py:5: sys.path.insert(0, "/workspace")'
    )
    assert all(found.values()), found


RUNS = [
    ("cd /workspace && python3 -m pytest -q\n", "tests/test.sh:1: cd /workspace && python3"),
    ("cd '/workspace'\npytest\n", "tests/test.sh:1: cd '/workspace'"),
    ("pytest /workspace/tests\n", "tests/test.sh:1: pytest /workspace/tests"),
    ("PYTHONPATH=/workspace python3 /tests/t.py\n", "tests/test.sh:1: PYTHONPATH=/workspace"),
    ("/workspace/build/run_tests\n", "tests/test.sh:1: /workspace/build/run_tests"),
    ("make -C /workspace test\n", "tests/test.sh:1: make -C /workspace test"),
    ("source /workspace/env.sh\n", "tests/test.sh:1: source /workspace/env.sh"),
]
QUIET = [
    "python3 - <<'EOF'\nprint(open('/workspace/answer.txt').read())\nEOF\n",
    "git -C /workspace diff > /logs/verifier/diff.txt\n",
    "# cd /workspace would import the submission; we do not\npython3 /tests/t.py\n",
    "python3 -I /tests/t.py /workspace/out.json\n",
]


@pytest.mark.parametrize(("script", "said"), RUNS)
def test_a_test_script_that_runs_the_workspace_is_flagged(
    tmp_path: Path, script: str, said: str
) -> None:
    assert runs_submission(_task(tmp_path, script)).startswith(said)


@pytest.mark.parametrize("script", QUIET)
def test_tests_that_only_read_the_workspace_are_not(tmp_path: Path, script: str) -> None:
    assert runs_submission(_task(tmp_path, script)) == ""


def test_a_python_test_that_chdirs_or_loads_from_the_workspace_is_flagged(
    tmp_path: Path,
) -> None:
    chdir = _task(
        tmp_path / "a", "python3 /tests/t.py\n", **{"t.py": "import os\nos.chdir('/workspace')\n"}
    )
    assert runs_submission(chdir) == "tests/t.py:2: os.chdir('/workspace')"
    loaded = "import runpy\nrunpy.run_path('/workspace/main.py')\n"
    assert runs_submission(_task(tmp_path / "b", "true\n", **{"t.py": loaded})).startswith(
        "tests/t.py:2: runpy.run_path"
    )


def test_tasks_check_names_the_tasks_whose_reward_could_be_forged(tmp_path: Path) -> None:
    bundled = load_suite("pytorch")[0].task_dir
    clean = _task(tmp_path / "clean", QUIET[0])
    result = CliRunner().invoke(tasks, ["check", bundled, str(clean)])
    assert result.exit_code == 0, result.output
    assert "tests run the submission as root: tests/" in result.stdout
    assert result.stdout.count("tests run the submission") == 1
    assert "1 of 2 tasks run the submission in their tests" in result.stdout
    assert load_task(clean).runs_submission == ""


def test_the_report_names_the_tasks_whose_reward_could_be_forged() -> None:
    result = hand_result()
    plan = result.plan.model_copy(update={"forgeable_tasks": ("t1", "t3")})
    forged = RunResult.model_validate(result.model_copy(update={"plan": plan}).model_dump())
    assert forged.scorecard is not None
    md = render_markdown(forged, forged.scorecard)
    assert "## Rewards the submission could write" in md
    assert "2 task(s) run the submission's code as root in their tests" in md
    assert "t1, t3" in md
    html = render_html(forged, forged.scorecard)
    assert "<h2>Rewards the submission could write</h2>" in html and "t1, t3" in html
    assert result.scorecard is not None
    assert "could write" not in render_markdown(result, result.scorecard)


def test_the_plan_names_the_tasks_whose_reward_could_be_forged(tmp_path: Path) -> None:
    request = RunRequest(
        run_id="r1", suite="pytorch", agent=AgentSpec(name="claude-code", model=MODEL)
    )
    plan = make_plan(request, Settings(home=tmp_path))
    assert plan.forgeable_count == 4  # the bundled suite's four tasks all import tinytensor
    assert sorted(plan.forgeable_tasks) == sorted(t.task_id for t in load_suite("pytorch"))
