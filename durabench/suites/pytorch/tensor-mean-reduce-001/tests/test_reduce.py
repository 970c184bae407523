"""Tests of tinytensor.reduce; exit 0 only if all pass."""

import sys

sys.path.insert(0, "/workspace")

from tinytensor import reduce  # noqa: E402

x = [[1, 2, 3], [4, 5, 6]]
checks = {
    "sum_axis_none": reduce.sum(x) == 21.0,
    "sum_axis_1": reduce.sum(x, axis=1) == [6.0, 15.0],
    "mean_axis_none": reduce.mean(x) == 3.5,
    "mean_axis_0": reduce.mean(x, axis=0) == [2.5, 3.5, 4.5],
    "mean_axis_1": reduce.mean(x, axis=1) == [2.0, 5.0],
    "mean_tall": reduce.mean([[1, 3], [5, 7], [9, 11]], axis=1) == [2.0, 6.0, 10.0],
}
for name, ok in checks.items():
    print(("PASS " if ok else "FAIL ") + name)
sys.exit(0 if all(checks.values()) else 1)
