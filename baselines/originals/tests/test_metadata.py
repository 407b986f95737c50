"""git_commit() with SDTW_GIT_COMMIT set, as sdtw-bench's git_info: dirty from SDTW_GIT_DIRTY, else unknown."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "torch/python")]

from baselines.originals import metadata  # noqa: E402


def test_named_commit_takes_dirty_from_the_environment_else_unknown(monkeypatch):
    monkeypatch.setenv("SDTW_GIT_COMMIT", "abc123")
    monkeypatch.delenv("SDTW_GIT_DIRTY", raising=False)
    assert metadata.git_commit() == ("abc123", "unknown")
    monkeypatch.setenv("SDTW_GIT_DIRTY", "")
    assert metadata.git_commit() == ("abc123", "unknown")
    monkeypatch.setenv("SDTW_GIT_DIRTY", "true")
    assert metadata.git_commit() == ("abc123", "true")
    assert metadata.commit_label() == "abc123 (dirty)"
