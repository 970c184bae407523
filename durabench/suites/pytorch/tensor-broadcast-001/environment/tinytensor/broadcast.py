"""Broadcasting of nested-list tensors."""


def shape_of(x):
    """Shape of a nested list (a scalar has shape ())."""
    shape = []
    while isinstance(x, list):
        shape.append(len(x))
        x = x[0] if x else None
    return tuple(shape)


def broadcast_shapes(a, b):
    """The shape two shapes broadcast to; ValueError if they are incompatible."""
    out = []
    for da, db in zip(a, b):
        if da != db and 1 not in (da, db):
            raise ValueError(f"shapes {a} and {b} cannot be broadcast")
        out.append(max(da, db))
    longer = a if len(a) > len(b) else b
    out.extend(longer[len(out):])
    return tuple(out)


def _expand(x, shape):
    """Expand nested list x (already of the same rank) to shape."""
    if not shape:
        return x
    items = x if len(x) == shape[0] else x * shape[0]
    return [_expand(item, shape[1:]) for item in items]


def broadcast_to(x, shape):
    """x broadcast to shape."""
    rank = len(shape_of(x))
    for _ in range(len(shape) - rank):
        x = [x]
    return _expand(x, shape)


def add(x, y):
    """Elementwise sum with broadcasting."""
    shape = broadcast_shapes(shape_of(x), shape_of(y))
    return _zip_add(broadcast_to(x, shape), broadcast_to(y, shape))


def _zip_add(x, y):
    if isinstance(x, list):
        return [_zip_add(a, b) for a, b in zip(x, y)]
    return x + y
