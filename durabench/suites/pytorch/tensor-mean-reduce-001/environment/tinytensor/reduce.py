"""Reductions over 2-D nested lists."""

import builtins


def sum(x, axis=None):  # noqa: A001 - mirrors torch.sum
    """Sum over all elements (axis None), columns (axis 0) or rows (axis 1)."""
    if axis is None:
        return float(builtins.sum(v for row in x for v in row))
    if axis == 0:
        return [float(builtins.sum(col)) for col in zip(*x)]
    if axis == 1:
        return [float(builtins.sum(row)) for row in x]
    raise ValueError(f"axis must be None, 0 or 1, not {axis!r}")


def mean(x, axis=None):
    """Mean over all elements (axis None), columns (axis 0) or rows (axis 1)."""
    total = sum(x, axis)
    if axis is None:
        return total / (len(x) * len(x[0]))
    return [t / len(x) for t in total]
