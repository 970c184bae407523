"""Tests of tinytensor.activations against the exact GELU; exit 0 only if all pass."""

import math
import sys

sys.path.insert(0, "/workspace")

from tinytensor.activations import gelu, relu  # noqa: E402


def exact_gelu(v):
    return 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))


checks = {
    "relu": relu([[-1.0, 0.0], [2.5, -3.0]]) == [[0.0, 0.0], [2.5, 0.0]],
    "gelu_close_to_exact": all(
        abs(gelu(v) - exact_gelu(v)) < 1e-3 for v in [-3.0, -1.0, -0.1, 0.0, 0.5, 1.0, 2.0, 4.0]
    ),
    "gelu_nested": [round(v, 4) for v in gelu([[2.0, -2.0]])[0]] == [1.9546, -0.0454],
}
for name, ok in checks.items():
    print(("PASS " if ok else "FAIL ") + name)
sys.exit(0 if all(checks.values()) else 1)
