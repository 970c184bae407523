"""Each durabench subpackage fixes its public surface with a sorted ``__all__``."""

import importlib

import pytest

PACKAGES = [
    "durabench.accounts",
    "durabench.agents",
    "durabench.audit",
    "durabench.attempt",
    "durabench.classify",
    "durabench.configs",
    "durabench.gateway",
    "durabench.models",
    "durabench.prices",
    "durabench.results.store",
    "durabench.results.viewer",
    "durabench.sandbox",
    "durabench.service",
    "durabench.tasks",
    "activities",
    "workflows",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert list(exported) == sorted(exported, key=lambda s: (not s.isupper(), s))
    for symbol in exported:
        assert hasattr(module, symbol), f"{name}.{symbol} is in __all__ but missing"


def test_domain_does_not_import_temporal() -> None:
    from pathlib import Path

    import durabench

    root = Path(durabench.__file__).parent
    offenders = [
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if "suites" not in p.parts and "temporalio" in p.read_text()
    ]
    assert offenders == []
