"""``starter run``'s short flags, ``--config run.toml`` and ``--print-config``.

The command is driven through click with ``--print-config``, which builds the request
and prints it without starting anything (no Temporal, no Docker).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from starter.run import run
from starter.run_config import dump_request, load_request

STAMP = "20261129-120000-abcd"


def _load(file: Path, **given: str) -> RunRequest:
    """The file's request on a machine with the default settings, paired runs only."""
    return load_request(file, Settings(home=file.parent), allow_unpaired=False, **given)


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path / "home"))
    (tmp_path / "temporal.toml").write_text("")  # no profile: nothing of this machine's
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(tmp_path / "temporal.toml"))
    monkeypatch.chdir(tmp_path)


def _printed(*args: str) -> str:
    result = CliRunner().invoke(run, [*args, "--print-config"])
    assert result.exit_code == 0, result.output
    return result.output


def test_short_flags_are_the_long_ones() -> None:
    long = ["--agent", "claude-code", "--model", "claude-x", "--parallel", "3"]
    with run.make_context("run", ["-a", "claude-code", "-m", "claude-x", "-n", "3"]) as short:
        with run.make_context("run", long) as spelled:
            assert short.params == spelled.params
            assert (short.params["agent"], short.params["model"]) == ("claude-code", "claude-x")
            assert short.params["parallel"] == 3
    assert _printed("--suite", "s", "-a", "nop", "-n", "2") == _printed(
        "--suite", "s", "--agent", "nop", "--parallel", "2"
    )


def test_no_flag_of_run_is_claimed_twice() -> None:
    flags = [opt for p in run.params for opt in (*p.opts, *p.secondary_opts)]
    assert len(flags) == len(set(flags)), sorted(f for f in flags if flags.count(f) > 1)
    assert {"-a", "-m", "-n", "-c", "-h"} - {"-h"} <= set(flags)


def test_print_config_then_config_asks_for_the_same_request(tmp_path: Path) -> None:
    flags = ["--suite", "pytorch", "-a", "nop", "-m", "m1", "-n", "3", "--agent-opt", "k=v"]
    flags += ["--budget", "1000", "--full-only", "--run-id", "r-1", "--service-url"]
    flags += ["http://127.0.0.1:9", "--service-api", "v1", "--dataset-name", "ds"]
    flags += ["--payload-schema", "fabv2.text.v1"]
    text = _printed(*flags)
    file = tmp_path / "run.toml"
    file.write_text(text)
    assert _printed("--config", str(file)) == text
    request = _load(file, stamp=STAMP)
    assert request.run_id == "r-1" and request.parallel == 3 and request.budget_tokens == 1000
    assert request.agent == AgentSpec(name="nop", model="m1", options={"k": "v"})
    assert request.config_mode == "full_only" and request.service is not None
    assert request.service.api == "v1" and request.service.dataset == "ds"


def test_a_file_without_a_run_id_makes_a_new_run_each_time(tmp_path: Path) -> None:
    text = _printed("--suite", "pytorch", "--selection-file", "sel.json")
    assert "run_id" not in tomllib.loads(text)
    file = tmp_path / "run.toml"
    file.write_text(text)
    first = _load(file, stamp=STAMP)
    assert first.run_id == f"pytorch-{STAMP}"
    assert first.selection == str(tmp_path / "sel.json")
    assert _load(file, stamp=STAMP, run_id="mine").run_id == "mine"  # --run-id
    assert _load(file, stamp=STAMP).model_copy(update={"run_id": "x"}) == (
        first.model_copy(update={"run_id": "x"})
    )


def test_relative_paths_in_a_file_are_the_files(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    file = tmp_path / "conf" / "run.toml"
    file.write_text('suite = ""\nselection = "../sel.json"\nbenchmarks_dir = "csb"\n')
    request = _load(file, stamp=STAMP)
    assert request.selection == str(tmp_path / "sel.json")
    assert request.benchmarks_dir == str(tmp_path / "conf" / "csb")
    assert request.run_id == f"sel-{STAMP}"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('suite = "s"\nparalel = 2\n', "paralel: no such key of a run request"),
        ('suite = "s"\n[agent]\nname = "nop"\nmodle = "m"\n', "agent.modle: no such key"),
        ('suite = "s"\n[service]\nurl = "http://x"\n[service.retry]\ntries = 1\n', "retry.tries"),
        ('suite = "s"\nparallel = 0\n', "parallel: Input should be greater than or equal to 1"),
        ('suite = "s"\ncategory = "prod"\n', "category: Input should be 'staging' or 'official'"),
        ("parallel = 2\n", "suite: Field required"),
        ('suite = "s"\nrun_id = "a b/c"\n', "run_id: "),
        ('suite = "s"\napproved_by = "me"\n', "approved_by: a file does not approve"),
        ('suite = "s\n', "not a readable TOML file"),
        ("suite = " + "[" * 100 + "]" * 100 + "\n", "nested more than 64 levels deep"),
    ],
)
def test_a_bad_file_is_refused_naming_the_key(tmp_path: Path, text: str, said: str) -> None:
    file = tmp_path / "run.toml"
    file.write_text(text)
    with pytest.raises(click.BadParameter) as refused:
        _load(file, stamp=STAMP)
    message = refused.value.format_message()
    assert said in message and str(file) in message and "--config" in message


def test_request_flags_beside_config_are_refused_naming_them(tmp_path: Path) -> None:
    file = tmp_path / "run.toml"
    file.write_text('suite = "pytorch"\n')
    result = CliRunner().invoke(run, ["-c", str(file), "-a", "nop", "--full-only"])
    assert result.exit_code == 2
    assert "--agent" in result.output and "--baseline-only/--full-only" in result.output
    assert "edit the file" in result.output
    assert 'run_id = "mine"' in _printed("-c", str(file), "--run-id", "mine")


_text = st.text(max_size=20)


@settings(max_examples=60, deadline=None)
@given(
    suite=_text,
    model=_text,
    options=st.dictionaries(_text, _text, max_size=3),
    backoff=st.floats(min_value=0, allow_nan=False),
    parallel=st.none() | st.integers(min_value=1, max_value=10**9),
)
def test_any_request_reads_back_as_it_was_written(
    suite: str, model: str, options: dict[str, str], backoff: float, parallel: int | None
) -> None:
    request = RunRequest(
        run_id="r",
        suite=suite,
        agent=AgentSpec(name="nop", model=model, options=options),
        infra_backoff_sec=backoff,
        parallel=parallel,
    )
    data = tomllib.loads(dump_request(request, with_run_id=True))
    assert RunRequest.model_validate(data) == request
