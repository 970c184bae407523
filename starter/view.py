"""``python -m starter view [run-id]``: runs, pairs and attempts in a browser, on loopback."""

from __future__ import annotations

import webbrowser

import click

from durabench.errors import ConfigError, DurabenchError
from durabench.results.store import open_store
from durabench.results.viewer import ViewerSite, serve
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from starter.options import checked_run_id, int_range
from starter.refusal import Refusal

__all__ = ["view", "viewer_site"]


def viewer_site(settings: Settings) -> ViewerSite:
    """The viewer of ``settings``' runs; with an object store, its files fetched as read.

    Raises:
        ResultStoreError: the object store refused or could not be reached.
    """
    settings.runs_dir.mkdir(parents=True, exist_ok=True)
    if not settings.results_url:
        return ViewerSite(settings.runs_dir)
    store = open_store(settings)
    store.pull_index(settings.runs_dir)
    fetched: set[str] = set()

    def fetch(paths: RunPaths) -> None:
        if paths.root.name not in fetched:  # once per run: reload the viewer for newer files
            store.pull(paths)
            fetched.add(paths.root.name)

    return ViewerSite(settings.runs_dir, fetch)


@click.command()
@click.argument("run_id", required=False, callback=checked_run_id)
@click.option(
    "--port", type=int_range(0, 65535), default=0, show_default=True, help="Port (0: a free one)."
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a browser.")
def view(run_id: str | None, port: int, open_browser: bool) -> None:
    """Serve a viewer of runs on 127.0.0.1: plans, scores, trajectories, verifier output.

    It reads $DURABENCH_HOME/runs (or the object store of DURABENCH_RESULTS_URL) and runs
    until Ctrl-C.
    """
    try:
        settings = Settings.from_env()
        if run_id is not None and not settings.results_url:
            if not RunPaths.for_run(settings.runs_dir, run_id).plan.is_file():
                raise ConfigError(
                    f"no run {run_id} in {settings.runs_dir}; `python -m starter view` "
                    "lists the runs there"
                )
        server = serve(viewer_site(settings), "127.0.0.1", port)
    except DurabenchError as exc:  # bad settings, no such run, the store unreachable
        raise Refusal(str(exc)) from exc
    except OSError as exc:  # the port is taken
        raise Refusal(
            f"cannot listen on 127.0.0.1:{port}: {exc}; choose another --port, or 0 for a free one"
        ) from exc
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    url += f"runs/{run_id}/" if run_id else ""
    click.echo(f"viewing {settings.runs_dir} at {url} (Ctrl-C stops it)", err=True)
    click.echo(url)
    if open_browser:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("viewer stopped", err=True)
    finally:
        server.server_close()
