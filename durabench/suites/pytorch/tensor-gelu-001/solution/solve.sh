#!/bin/bash
# Reference fix: the cubic coefficient is 0.044715.
set -euo pipefail
python3 - <<'PY'
from pathlib import Path

path = Path("/workspace/tinytensor/activations.py")
source = path.read_text()
if "0.44715" not in source:
    raise SystemExit("the wrong constant is not there")
path.write_text(source.replace("0.44715", "0.044715"))
PY
