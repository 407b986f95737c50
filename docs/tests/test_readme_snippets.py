"""The READMEs' Python snippets run as written: every ```python block of the top-level README.md and
of the READMEs one folder down runs in a fresh interpreter from an empty directory and exits 0.
A block that must not run says so on the line before its fence:
    <!-- snippet: no-run: why -->
sdtw_torch comes from PYTHONPATH and SDTW_TORCH_LIBRARY, which ctest sets (docs/CMakeLists.txt).
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^\s*```\s*([\w+-]*)")
NO_RUN = re.compile(r"^\s*<!--\s*snippet:\s*no-run\b\s*:?\s*(.*?)\s*-->\s*$")
PYTHON_TAGS = {"python", "python3", "py", "pycon"}
SNIPPET_TIMEOUT_S = 600


def readmes():
    """The top-level README and those one folder down, build trees aside."""
    found = [SOURCE / "README.md"]
    found += sorted(p for p in SOURCE.glob("*/README.md") if not p.parent.name.startswith("build"))
    return found


def blocks(path):
    """(line of the fence, language tag, code, no-run reason or None) of each fenced block; a no-run
    marker that precedes no block, or a fence left open, is an error."""
    lines, name = path.read_text().splitlines(), path.relative_to(SOURCE)
    found, marker, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        opening, no_run = FENCE.match(line), NO_RUN.match(line)
        if no_run:
            marker = (i + 1, no_run.group(1) or "marked no-run")
        elif opening:
            start, tag = i + 1, opening.group(1).lower()
            end = next((j for j in range(i + 1, len(lines)) if FENCE.match(lines[j])), None)
            if end is None:
                raise AssertionError(f"{name}:{start}: fence left open")
            found.append((start, tag, "\n".join(lines[i + 1:end]) + "\n", marker and marker[1]))
            marker, i = None, end
        elif line.strip() and marker:
            raise AssertionError(f"{name}:{marker[0]}: no-run marker not on the line before a fence")
        i += 1
    if marker:
        raise AssertionError(f"{name}:{marker[0]}: no-run marker at the end of the file")
    return found


def python_snippets():
    snippets = []
    for path in readmes():
        for start, tag, code, reason in blocks(path):
            if tag in PYTHON_TAGS:
                snippets.append(pytest.param(code, reason, id=f"{path.relative_to(SOURCE)}:{start}"))
    return snippets


def test_the_readme_has_python_snippets():
    assert any(tag in PYTHON_TAGS for _, tag, _, _ in blocks(SOURCE / "README.md"))


def test_no_run_markers_stand_before_python_blocks():
    for path in readmes():
        for start, tag, _, reason in blocks(path):
            where = f"{path.relative_to(SOURCE)}:{start}"
            assert reason is None or tag in PYTHON_TAGS, f"{where}: no-run marker on a {tag or 'plain'} block"


@pytest.mark.parametrize("code,reason", python_snippets())
def test_snippet_runs(code, reason, tmp_path):
    if reason is not None:
        pytest.skip(reason)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    for name in ("PYTHONPATH", "SDTW_TORCH_LIBRARY"):
        assert env.get(name), f"{name} is not set (ctest sets it; see docs/CMakeLists.txt)"
    script = tmp_path / "snippet.py"
    script.write_text(code)
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=SNIPPET_TIMEOUT_S)
    assert result.returncode == 0, (f"exit {result.returncode}\n--- code\n{code}--- stdout\n{result.stdout}"
                                    f"--- stderr\n{result.stderr}")
