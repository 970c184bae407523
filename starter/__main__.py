"""``python -m starter``."""

from starter.main import cli

cli()
