"""Shared test set-up: the repository root is importable (tests import their shared helpers
as ``tests.<folder>.<module>`` under --import-mode=importlib)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
