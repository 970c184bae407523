"""Activation functions, applied elementwise to nested lists."""

import math

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _map(fn, x):
    if isinstance(x, list):
        return [_map(fn, item) for item in x]
    return fn(x)


def relu(x):
    """max(x, 0) elementwise."""
    return _map(lambda v: v if v > 0 else 0.0, x)


def _gelu(v):
    inner = _SQRT_2_OVER_PI * (v + 0.44715 * v**3)
    return 0.5 * v * (1.0 + math.tanh(inner))


def gelu(x):
    """GELU, tanh approximation, elementwise."""
    return _map(_gelu, x)
