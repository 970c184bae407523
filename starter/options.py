"""Options shared by several commands, and running a command's async core."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

import click
from temporalio.client import WorkflowFailureError, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from durabench import errors
from durabench.errors import ConfigError, DurabenchError
from durabench.ids import check_id
from durabench.settings.environment import ALLOW_UNKNOWN_MODEL_ENV, allow_unknown_models
from durabench.settings.numbers import MAX_NUMBER
from starter.loop import run_command
from starter.refusal import Refusal

__all__ = [
    "allow_unknown_model",
    "checked_run_id",
    "failure_message",
    "float_range",
    "int_range",
    "run_async",
    "run_id_argument",
    "service_scale_option",
    "service_url_option",
]

P = ParamSpec("P")
R = TypeVar("R")
FC = TypeVar("FC", bound=Callable[..., Any])


def checked_run_id(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Click callback: a run id names a results directory, so it must be an id."""
    if value is None:
        return None
    try:
        return check_id(value, "run id")
    except ConfigError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from exc


run_id_argument = click.argument("run_id", callback=checked_run_id)


class _FiniteRange(click.FloatRange):
    """:class:`click.FloatRange` that refuses NaN, which compares false with any bound."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{number} is not a number; give a finite one", param, ctx)
        return number


def float_range(
    min: float | None = None, max: float = MAX_NUMBER, *, min_open: bool = False
) -> click.FloatRange:
    """A number flag: finite, within ``min`` and ``max`` (a billion unless said), as settings."""
    return _FiniteRange(min=min, max=max, min_open=min_open)


def int_range(min: int | None = None, max: int = MAX_NUMBER) -> click.IntRange:
    """A whole-number flag within ``min`` and ``max`` (a billion unless said), as settings."""
    return click.IntRange(min=min, max=max)


def service_url_option(text: str) -> Callable[[FC], FC]:
    """``--service-url``, the benchmark service's base URL; ``text`` says what it does here."""
    return click.option("--service-url", default=None, help=text)


def service_scale_option(default: float | None, text: str) -> Callable[[FC], FC]:
    """``--service-scale``, the value of a full pass: above 0, whatever the command."""
    return click.option(
        "--service-scale",
        type=float_range(min=0, min_open=True),
        default=default,
        show_default=default is not None,
        help=text,
    )


def _allow_unknown(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:  # read by the plan-time model check, here and in this process's worker
        allow_unknown_models()


allow_unknown_model = click.option(
    "--allow-unknown-model",
    is_flag=True,
    expose_value=False,
    callback=_allow_unknown,
    help="Run a model id the agent's provider list (and $DURABENCH_HOME/models.txt) lacks "
    f"[{ALLOW_UNKNOWN_MODEL_ENV}].",
)


def _ours(exc: BaseException) -> bool:
    """Whether ``exc`` is a durabench error, here or as an activity's failure."""
    if isinstance(exc, DurabenchError):
        return True
    name = exc.type if isinstance(exc, ApplicationError) else None
    found = getattr(errors, name or "", None)
    return isinstance(found, type) and issubclass(found, DurabenchError)


def failure_message(exc: BaseException) -> str:
    """What went wrong, from a failure chain: durabench's first sentence, else the innermost.

    A durabench error says what to do; what it was raised from (a JSON parser's
    complaint, an ``[Errno 2]``) only says what broke, and Temporal's wrappers say less.
    """
    while exc.__cause__ is not None and not _ours(exc):
        exc = exc.__cause__
    return str(getattr(exc, "message", None) or exc)


def _not_found(message: str) -> str:
    """Temporal's "workflow not found for ID: run/x", in durabench's words."""
    named = re.search(r"ID: run/(\S+)", message)
    what = f"no run {named.group(1)}" if named else message
    return f"{what}; list the runs with `python -m starter status`"


def _error(message: str) -> click.ClickException:
    """A clean exit whose message may quote a task's or a service's words: escapes shown."""
    return Refusal(message)


def run_async(fn: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, R]:
    """Run an async command core; turn durabench and Temporal errors into clean exits."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return run_command(fn(*args, **kwargs))
        except DurabenchError as exc:
            raise _error(str(exc)) from exc
        except WorkflowFailureError as exc:
            raise _error(f"the run failed: {failure_message(exc)}") from exc
        except WorkflowUpdateFailedError as exc:  # a validator's refusal: its reason says all
            raise _error(failure_message(exc)) from exc
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                raise _error(_not_found(exc.message)) from exc
            raise _error(f"Temporal refused: {exc.message}") from exc

    return wrapper
