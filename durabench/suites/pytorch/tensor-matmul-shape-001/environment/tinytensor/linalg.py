"""Linear algebra on 2-D nested lists."""


def dims(m):
    """(rows, cols) of a 2-D nested list."""
    return len(m), len(m[0]) if m else 0


def matmul(a, b):
    """The matrix product a @ b."""
    (n, k), (k2, m) = dims(a), dims(b)
    if m != k:
        raise ValueError(f"matmul: shapes {(n, k)} and {(k2, m)} are not aligned")
    return [[sum(a[i][j] * b[j][c] for j in range(k)) for c in range(m)] for i in range(n)]


def transpose(m):
    """The transpose of a 2-D nested list."""
    rows, cols = dims(m)
    return [[m[r][c] for r in range(rows)] for c in range(cols)]
