"""The durabench CLI: ``python -m starter run|approve|reject|status|report|publish|...``."""
