"""The sandbox backend, checked before a plan is approved: one line naming what failed.

Docker: the daemon answers and the base image is here or pullable
(:func:`~durabench.planning.base_image.check_base_image`). Daytona: its API answers,
takes the key and takes builds (:func:`~durabench.sandbox.daytona.preflight.check_daytona`),
and the base image's registry serves it to anyone, as Daytona's builds pull it
(:func:`~durabench.sandbox.daytona.base_pull.check_base_pullable`).
Either way an approved run cannot spend its retries on a backend that refuses every
sandbox. Blocking: the plan activity calls it in a thread.
"""

from __future__ import annotations

from durabench.errors import ConfigError, DockerUnavailable
from durabench.planning.base_image import check_base_image
from durabench.settings.sources import CONFIG_FILE
from durabench.settings.values import Settings

__all__ = ["check_backend"]


def check_backend(settings: Settings) -> tuple[str, ...]:
    """Accept the worker's sandbox backend, or refuse in one line.

    Returns:
        What the check could not tell (a registry the worker cannot reach): the plan's
        warnings.

    Raises:
        ConfigError: the backend cannot run the plan's sandboxes; the message says why.
    """
    if settings.sandbox == "docker":
        try:
            check_base_image(settings.base_image, settings.home / CONFIG_FILE)
        except (DockerUnavailable, ConfigError) as exc:
            raise ConfigError(f"Docker preflight: {exc}") from exc
        return ()
    from durabench.sandbox.daytona import DaytonaOptions
    from durabench.sandbox.daytona.base_pull import check_base_pullable
    from durabench.sandbox.daytona.preflight import check_daytona

    options = DaytonaOptions.from_env()
    check_daytona(options)
    if not options.base_check:
        return ()
    unknown = check_base_pullable(settings.base_image)
    return (unknown,) if unknown else ()
