"""The search attributes a run and its attempts are listed by in the Web UI."""

from __future__ import annotations

import pytest

from durabench.models.benchmark_service import ServiceTarget
from durabench.models.run import RunRequest
from runtime.embedded import dev_server_args
from workflows.search_attributes import (
    REWARD,
    SEARCH_ATTRIBUTES,
    SUITE,
    for_request,
    suite_of,
    type_name,
)


@pytest.mark.parametrize(
    ("request_fields", "suite"),
    [
        ({"suite": "pytorch"}, "pytorch"),
        ({"suite": "", "selection": "/x/configs/selected_tasks.json"}, "selected_tasks"),
        ({"suite": "pytorch", "selection": "/x/sel.json"}, "pytorch"),
        ({"suite": "", "dataset_file": "/x/questions.json"}, "questions"),
        (
            {"suite": "", "service": ServiceTarget(url="http://127.0.0.1:8000", dataset="gsm8k")},
            "gsm8k",
        ),
    ],
)
def test_every_kind_of_run_is_listed_under_a_suite(
    request_fields: dict[str, object], suite: str
) -> None:
    request = RunRequest.model_validate({"run_id": "r", **request_fields})
    assert suite_of(request) == suite
    assert for_request(request).get(SUITE) == suite


def test_a_plan_from_a_default_selection_file_names_it() -> None:
    request = RunRequest(run_id="r", suite="", benchmarks_dir="/cs")
    assert suite_of(request, "/cs/configs/selected_benchmark_tasks.json") == (
        "selected_benchmark_tasks"
    )


def test_the_dev_server_registers_each_attribute_with_its_type() -> None:
    args = dev_server_args(port=1, ui_port=None, db_file=None)
    registered = {args[i + 1] for i, arg in enumerate(args) if arg == "--search-attribute"}
    assert registered == {f"{key.name}={type_name(key)}" for key in SEARCH_ATTRIBUTES}
    assert f"{REWARD.name}=Double" in registered
    assert "DurabenchExitClass=Keyword" in registered
