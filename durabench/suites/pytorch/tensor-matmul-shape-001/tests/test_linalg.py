"""Tests of tinytensor.linalg; exit 0 only if all pass."""

import sys

sys.path.insert(0, "/workspace")

from tinytensor.linalg import matmul, transpose  # noqa: E402


def raises_value_error(fn):
    try:
        fn()
    except ValueError as exc:
        return "(2, 3)" in str(exc)
    except Exception:  # noqa: BLE001
        return False
    return False


a = [[1, 2, 3], [4, 5, 6]]
checks = {
    "valid_product": matmul(a, transpose(a)) == [[14, 32], [32, 77]]
    if not raises_value_error(lambda: matmul(a, transpose(a)))
    else False,
    "column_vector": not raises_value_error(lambda: matmul(a, [[1], [0], [1]])),
    "misaligned_raises": raises_value_error(lambda: matmul(a, a)),
}
for name, ok in checks.items():
    print(("PASS " if ok else "FAIL ") + name)
sys.exit(0 if all(checks.values()) else 1)
