#!/bin/bash
# Reference fix: align shapes at their trailing dimensions.
set -euo pipefail
cat > /workspace/tinytensor/broadcast_fix.py <<'PY'
def broadcast_shapes(a, b):
    """The shape two shapes broadcast to; ValueError if they are incompatible."""
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for da, db in zip(a, b):
        if da != db and 1 not in (da, db):
            raise ValueError(f"shapes {a} and {b} cannot be broadcast")
        out.append(max(da, db))
    return tuple(out)
PY
python3 - <<'PY'
import re
from pathlib import Path

path = Path("/workspace/tinytensor/broadcast.py")
fix = Path("/workspace/tinytensor/broadcast_fix.py")
source = path.read_text()
pattern = re.compile(r"def broadcast_shapes\(a, b\):.*?return tuple\(out\)\n", re.S)
if not pattern.search(source):
    raise SystemExit("broadcast_shapes not found")
path.write_text(pattern.sub(lambda _: fix.read_text(), source, count=1))
fix.unlink()
PY
