"""What the Web UI's "Send a Signal" list says of each of a run's signals.

The UI lists every signal handler the workflow has, with its description (the
``__temporal_workflow_metadata`` query), and the SDK offers no way to leave one out. So
each says what it does and the input a person gives, and the one the run's own pairs send
says first that it is internal: a person who sends it by hand changes no pair.
"""

from __future__ import annotations

__all__ = ["SIGNALS"]

SIGNALS = {
    "approve": (
        'Approve the plan and start the run. Input {"approver": "your name"}: the Web UI '
        "sends no identity of its own, so name yourself (with {} the sender's identity is "
        "recorded, if it gave one). Same as `python -m starter approve RUN_ID`."
    ),
    "reject": (
        'Refuse the plan: the run ends and starts nothing. Input {"rejected_by": "you", '
        '"reason": "why"}. Same as `python -m starter reject RUN_ID`.'
    ),
    "pause": (
        "Start no new pair or retry until `resume`; running attempts finish. Input "
        '{"by": "you", "reason": "why"} or {}.'
    ),
    "resume": 'Undo `pause`. Input {"by": "you"} or {}.',
    "set_parallel": "Change how many pairs run at once. Input a number, e.g. 4.",
    "pair_done": (
        "internal: each pair of the run sends it when it ends. Not for people: sent by hand "
        "for a pair still running, it counts that pair as done."
    ),
}
"""Description of each signal, by signal name."""
