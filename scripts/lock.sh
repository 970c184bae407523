#!/usr/bin/env bash
# Regenerate the lock files from pyproject.toml: requirements.lock (the worker image's
# install: the base and the s3 extra, for DURABENCH_RESULTS_URL) and requirements-dev.lock
# (CI's: the base and the dev extra).
# uv keeps every pin already in a lock unless told otherwise: pass `--upgrade` (or
# `--upgrade-package NAME`) to move one. Needs uv (`pip install uv`) and PyPI.
# tests/unit/test_lock.py holds the locks equal to pyproject.toml's declarations.
# --python-version 3.11.5: the oldest Python every locked package takes (pymdown-extensions).
set -euo pipefail
cd "$(dirname "$0")/.."
compile() {
  uv pip compile pyproject.toml --universal --python-version 3.11.5 --generate-hashes \
    --custom-compile-command scripts/lock.sh --quiet "$@"
}
compile --extra s3 -o requirements.lock "$@"
# the dev lock pins the base's packages as the base lock does: CI tests what the image runs
compile --extra dev --constraint requirements.lock -o requirements-dev.lock "$@"
