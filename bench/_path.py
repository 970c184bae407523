"""Import first: puts the checkout this file lives in at the front of ``sys.path``.

The bench measures the code of its own checkout (an editable install may point at another
one) and imports ``tests.workflows.fakes``, which ``pip install -e .`` does not install.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The checkout's root."""

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
