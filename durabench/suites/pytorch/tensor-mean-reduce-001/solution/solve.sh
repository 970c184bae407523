#!/bin/bash
# Reference fix: divide by the length of the reduced axis.
set -euo pipefail
python3 - <<'PY'
from pathlib import Path

path = Path("/workspace/tinytensor/reduce.py")
source = path.read_text()
old = "    return [t / len(x) for t in total]\n"
new = "    n = len(x) if axis == 0 else len(x[0])\n    return [t / n for t in total]\n"
if old not in source:
    raise SystemExit("the buggy line is not there")
path.write_text(source.replace(old, new))
PY
