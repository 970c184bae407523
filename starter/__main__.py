"""``python -m starter``."""

from starter.main import main

main()
