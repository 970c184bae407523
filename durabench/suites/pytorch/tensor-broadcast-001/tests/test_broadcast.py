"""Tests of tinytensor.broadcast; exit status 0 only if all pass."""

import sys

sys.path.insert(0, "/workspace")

from tinytensor.broadcast import add, broadcast_shapes  # noqa: E402


def test_trailing_alignment():
    assert broadcast_shapes((3, 1), (4,)) == (3, 4)
    assert broadcast_shapes((2, 3), (3,)) == (2, 3)
    assert broadcast_shapes((5,), (2, 1)) == (2, 5)


def test_equal_and_scalar():
    assert broadcast_shapes((2, 2), (2, 2)) == (2, 2)
    assert broadcast_shapes((), (3,)) == (3,)


def test_incompatible():
    try:
        broadcast_shapes((2, 3), (2,))
    except ValueError:
        return
    raise AssertionError("(2, 3) and (2,) must not broadcast")


def test_add():
    assert add([[1], [2]], [10, 20]) == [[11, 21], [12, 22]]
    assert add([1, 2, 3], 1) == [2, 3, 4]


if __name__ == "__main__":
    failed = 0
    for name, fn in sorted(globals().items()):
        if name.startswith("test_"):
            try:
                fn()
                print(f"PASS {name}")
            except Exception as exc:  # noqa: BLE001
                failed += 1
                print(f"FAIL {name}: {exc!r}")
    sys.exit(1 if failed else 0)
