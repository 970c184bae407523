"""The durabench CLI: ``python -m starter run|approve|reject|status|server|tasks``."""
