import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = sorted((ROOT / "problems").glob("*.toml"))
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def problems_dir():
    return ROOT / "problems"
