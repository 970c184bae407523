"""Every report opens with the result: the same sentence in report.md, report.html and the viewer.

The sentence is worked out by hand from ``results_set.py``. Its lane means are over the
pairs compared, t1, t2, t3, as the difference is: baseline's task means 1.0, 0.0, 0.5, mean
0.5, 1 of 3 passed; the full lane's 1.0, 1.0, 0.0, mean 2/3, 2 passed (over every scored
attempt baseline's mean is 3/5: t5's 1.0 counts there, though t5 is not compared). Mean
difference +1/6 = 2/3 - 1/2 with the 95% interval [-0.5, +1.0]; t4 excluded, t5 without a
score.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from durabench.models.results import RunResult
from durabench.results.report import render_markdown
from durabench.results.report_html import render_html
from durabench.results.story import result_story
from durabench.results.viewer import ViewerSite
from durabench.text_safety import md_escape
from tests.unit.results_set import hand_result
from tests.unit.viewer_run import write_run

HAND_STORY = (
    "Over the 3 pairs compared, baseline: mean reward 0.5 (1/3 passed); sourcegraph_full: "
    "mean reward 0.667 (2/3 passed). Paired difference (sourcegraph_full − baseline): "
    "+0.167, 95% CI [-0.500, +1.000]; 2 left out (1 excluded for infrastructure, 1 without "
    "a score)."
)


def test_the_hand_worked_run_in_one_sentence() -> None:
    assert result_story(hand_result()) == HAND_STORY


def _variants() -> dict[str, RunResult]:
    """The shapes a result takes: paired, clean, single-lane, nothing measured."""
    hand = hand_result()
    card = hand.scorecard
    assert card is not None
    every = {t.task_id: "infra" for t in hand.plan.tasks}
    return {
        "paired": hand,
        "clean": hand.model_copy(update={"excluded": {}}),
        "single lane": hand.model_copy(
            update={"scorecard": card.model_copy(update={"comparison": None})}
        ),
        "nothing measured": hand.model_copy(update={"excluded": every}),
    }


def _text(page: str) -> str:
    """What a browser shows of ``page``, tags out and entities decoded, with no whitespace."""
    return "".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


@pytest.mark.parametrize("name", list(_variants()))
def test_each_report_opens_with_the_result(name: str) -> None:
    result = _variants()[name]
    card = result.scorecard
    assert card is not None
    story = result_story(result)
    assert story
    markdown = render_markdown(result, card).splitlines()
    assert markdown[0].startswith("# durabench run ")
    assert markdown[2] == f"**{md_escape(story)}**", markdown[:4]  # before suite, approval, images
    page = render_html(result, card)
    after_title = _text(page.split("</h1>", 1)[1])
    assert after_title.startswith("".join(story.replace("`", "").split())), after_title[:300]
    assert page.count(html.escape(story).split(".")[0]) == 1  # said once, not again below


def test_the_viewer_opens_a_run_with_the_result(tmp_path: Path) -> None:
    write_run(tmp_path / "runs")
    page = ViewerSite(tmp_path / "runs").answer("/runs/hand/").body.decode()
    after_title = _text(page.split("</h1>", 1)[1])
    assert after_title.startswith("".join(HAND_STORY.split())), after_title[:300]
