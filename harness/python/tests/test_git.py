"""git_commit() with SDTW_GIT_COMMIT set, as sdtw-bench's git_info: dirty from SDTW_GIT_DIRTY, else unknown."""
from sdtw_results import git_commit


def test_named_commit_takes_dirty_from_the_environment_else_unknown():
    assert git_commit({"SDTW_GIT_COMMIT": "abc123"}) == ("abc123", "unknown")
    assert git_commit({"SDTW_GIT_COMMIT": "abc123", "SDTW_GIT_DIRTY": ""}) == ("abc123", "unknown")
    assert git_commit({"SDTW_GIT_COMMIT": "abc123", "SDTW_GIT_DIRTY": "true"}) == ("abc123", "true")


def test_without_a_named_commit_git_gives_the_head_of_this_tree():
    commit, dirty = git_commit({})
    assert len(commit) == 40 and int(commit, 16) >= 0 and dirty in ("true", "false")
