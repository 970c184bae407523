"""The boundary between activities and Temporal: nothing leaves an activity unscrubbed.

What an activity raises goes into Temporal history with its message, its chain of causes
and its stack trace; what it returns goes there too, and on into ``result.json``. Both can
carry what an agent wrote (a setup step's stderr, a verifier's output, a file name in its
workspace, the model its transcript names), and an agent holds secrets: its key, its MCP
token. :func:`scrubbed` wraps every activity of the worker:

* a failure leaves as one :class:`~temporalio.exceptions.ApplicationError` whose message
  is the original's, scrubbed, and that has no cause: ``raise ... from None``, so neither
  the chained exceptions nor their tracebacks travel (the stack trace left is the frames'
  code, never their values);
* its type is the original's class name, which retry policies match against
  :data:`durabench.errors.NON_RETRYABLE`, and it is non-retryable exactly when that type
  is a leaf there (or the activity already said so);
* a result leaves with every string in it scrubbed;
* cancellation passes through untouched, so Temporal still sees a cancelled activity.
"""

from __future__ import annotations

import functools
import os
import traceback
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, ParamSpec, Protocol, TypeVar, cast

from pydantic import BaseModel
from temporalio.exceptions import ApplicationError, CancelledError, FailureError

from durabench.accounts import account_secrets, load_accounts
from durabench.agents import agent_secret_env
from durabench.configs import mcp_token_envs
from durabench.errors import AccountError, non_retryable_names
from durabench.logs import get_logger
from durabench.service import BEARER_KEY_ENV, DESCOPE_KEY_ENV
from durabench.settings.secrets import scrub_text, secret_values

__all__ = ["KnownSecrets", "Scrubs", "boundary_error", "scrub_value", "scrubbed"]

log = get_logger("durabench.activities")

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")
M = TypeVar("M", bound=Callable[..., Awaitable[Any]])


class KnownSecrets:
    """Every secret value known on this worker, read afresh on each call.

    Agent keys, MCP tokens, service keys and account secrets: a key set or rotated since
    the worker started counts.
    """

    def __init__(self, accounts_file: Path) -> None:
        self.accounts_file = accounts_file
        self._accounts: set[str] = set()

    def __call__(self) -> tuple[str, ...]:
        """The values, longest first (so a secret inside a longer one cannot split it).

        An accounts file that turned invalid, or dropped an account, must not stop
        scrubbing, so every account secret seen since the worker started stays known.
        """
        try:
            self._accounts.update(account_secrets(load_accounts(self.accounts_file)))
        except AccountError as exc:
            log.error("accounts file unreadable; scrubbing the secrets known before", error=exc)
        names = (*agent_secret_env(), *mcp_token_envs(), DESCOPE_KEY_ENV, BEARER_KEY_ENV)
        known = secret_values(os.environ, names)
        return tuple(sorted({*known, *self._accounts}, key=len, reverse=True))


class Scrubs(Protocol):
    """An activity class that knows the worker's secrets."""

    @property
    def secrets(self) -> Callable[[], Sequence[str]]:
        """Returns every secret value to scrub."""
        ...


def scrub_value(value: T, secrets: Sequence[str]) -> T:
    """``value`` with every string in it scrubbed: in models, tuples, lists and dicts."""
    if not secrets:
        return value
    scrubbed_value: Any = value
    if isinstance(value, str):
        scrubbed_value = scrub_text(value, secrets)
    elif isinstance(value, BaseModel):
        fields = type(value).model_fields
        update = {name: scrub_value(getattr(value, name), secrets) for name in fields}
        scrubbed_value = value.model_copy(update=update)
    elif isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple
        scrubbed_value = type(value)(*(scrub_value(v, secrets) for v in value))
    elif isinstance(value, tuple | list):
        scrubbed_value = type(value)(scrub_value(v, secrets) for v in value)
    elif isinstance(value, dict):
        scrubbed_value = {
            scrub_value(k, secrets): scrub_value(v, secrets) for k, v in value.items()
        }
    return cast(T, scrubbed_value)


def boundary_error(exc: Exception, secrets: Callable[[], Sequence[str]]) -> ApplicationError:
    """The error that leaves the activity in place of ``exc``: raise it ``from None``.

    If the secrets cannot be read, the message is withheld rather than sent as it is.
    """
    name = (exc.type if isinstance(exc, ApplicationError) else None) or type(exc).__name__
    text = exc.message if isinstance(exc, FailureError) else str(exc)
    try:
        known = secrets()
    except Exception:  # noqa: BLE001 - any failure to read secrets must withhold the text
        log.error("the worker's secrets could not be read; a failure's message is withheld")
        known, text = (), f"{name} (its message is withheld: this worker's secrets are unreadable)"
    else:
        chain = "".join(traceback.format_exception(exc))
        log.debug("activity failed", error=scrub_text(chain, known))
    non_retryable = name in non_retryable_names()
    if isinstance(exc, ApplicationError):
        return ApplicationError(
            scrub_text(text, known),
            type=exc.type,
            non_retryable=exc.non_retryable or non_retryable,
            next_retry_delay=exc.next_retry_delay,
            category=exc.category,
        )
    return ApplicationError(scrub_text(text, known), type=name, non_retryable=non_retryable)


def scrubbed(method: M) -> M:
    """Wrap an activity method so its failures and its result leave scrubbed.

    Goes under ``@activity.defn``, which reads the method's signature through the wrapper.
    It returns the method's own type (its ``self`` by name, as Temporal's typed activity
    calls expect), so a workflow's call is checked against the method itself.
    """

    @functools.wraps(method)
    async def at_boundary(self: Scrubs, /, *args: Any, **kwargs: Any) -> Any:
        try:
            result = await method(self, *args, **kwargs)
        except CancelledError:  # Temporal's own cancellation: it must stay one
            raise
        except Exception as exc:
            raise boundary_error(exc, self.secrets) from None
        return scrub_value(result, self.secrets())

    return cast(M, at_boundary)
