"""Result files as the paper reads them (docs/DESIGN.md §5: `<stem>.csv` and its `<stem>.json` sidecar), and
where each was measured: tool, command, commit, date, GPU; and whether it is stale, i.e. measured
before the last commit that changed the code it measures (CODE_PATHS)."""
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from sdtw_results.schema import COLUMNS, DISPOSITIONS, SCHEMA  # noqa: F401  (the schema, one place)

# The code a measurement depends on: a file measured before the last change here is stale. The kernels'
# headers count: their cost policies are device code that every fused kernel inlines.
CODE_PATHS = ("kernels/include", "kernels/src", "pytorch/src", "pytorch/python")
CODE_PATHS_TEXT = ", ".join(CODE_PATHS)


def git(repo, *args):
    """stdout of a git command in repo, or None when it fails (no repository, unknown commit)."""
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


# The revision whose history judges staleness: HEAD, or the commit a set of outputs was made at (a test
# that the committed outputs are what the scripts make must not fail on a later change of the code).
_as_of = ["HEAD"]


def judge_as_of(rev):
    """Judges staleness from now on as of rev (a commit or HEAD)."""
    _as_of[0] = rev


def code_commit(repo):
    """The last commit up to the revision judged that changed the measured code, or None outside a git
    repository."""
    return git(repo, "log", "-1", "--format=%H", _as_of[0], "--", *CODE_PATHS) or None


def measured_after(repo, code, commit):
    """True when commit contains code (code is an ancestor of commit, or commit itself)."""
    if not code or not commit or commit == "unknown":
        return False
    done = subprocess.run(["git", "-C", str(repo), "merge-base", "--is-ancestor", code, commit], capture_output=True)
    return done.returncode == 0


@dataclass
class Source:
    """One result file and where it was measured."""
    path: Path
    metadata: dict = field(default_factory=dict)
    stale: bool = False
    why_stale: str = ""

    @property
    def name(self):
        return self.path.name

    @property
    def commit(self):
        return str(self.metadata.get("commit") or "unknown")

    @property
    def short(self):
        return self.commit[:7]

    @property
    def dirty(self):
        return str(self.metadata.get("dirty", "")).lower() == "true"

    @property
    def date(self):
        return str(self.metadata.get("date") or "unknown date")[:10]

    @property
    def gpu(self):
        return str(self.metadata.get("gpu") or "") or "CPU"

    @property
    def tool(self):
        return str(self.metadata.get("tool") or "")

    @property
    def command(self):
        command = self.metadata.get("command", "")
        return " ".join(map(str, command)) if isinstance(command, list) else str(command)

    def commit_text(self):
        """"commit abc1234" with what makes it weaker: a modified tree, STALE."""
        text = f"commit {self.short}" + (" (modified tree)" if self.dirty else "")
        return text + (" STALE" if self.stale else "")

    def stamp(self):
        return f"{self.name} · {self.gpu} · {self.commit_text()} · {self.date}"


def judge_staleness(source, repo):
    """Marks source stale when it was measured before the last change of CODE_PATHS in repo."""
    code = code_commit(repo)
    if code is None:
        return source
    if source.commit == "unknown":
        source.stale, source.why_stale = True, "its commit is not recorded"
    elif not measured_after(repo, code, source.commit):
        source.stale = True
        source.why_stale = f"measured at {source.short}, before {code[:7]} changed {CODE_PATHS_TEXT}"
    return source


def read_sidecar(csv_path):
    """The sidecar's metadata (with its tool), or {} when there is none."""
    json_path = Path(csv_path).with_suffix(".json")
    if not json_path.exists():
        return {}
    doc = json.loads(json_path.read_text())
    meta = dict(doc.get("metadata", {}))
    meta.setdefault("tool", doc.get("tool", ""))
    meta["schema"] = doc.get("schema", "")
    return meta


def read(csv_path, repo):
    """(rows, Source) of a result file of the schema: every common column present (by name), known
    dispositions, empty cells as NaN. Raises ValueError naming the file otherwise."""
    import pandas as pd  # here: results_readme.py reads sidecars with any Python 3, pandas or not

    csv_path = Path(csv_path)
    rows = pd.read_csv(csv_path, keep_default_na=False, na_values=[""])
    missing = [c for c in COLUMNS if c not in rows.columns]
    if missing:
        raise ValueError(f"{csv_path}: not a {SCHEMA} file: missing columns {missing}")
    bad = set(rows["disposition"].dropna()) - set(DISPOSITIONS)
    if bad:
        raise ValueError(f"{csv_path}: unknown dispositions {sorted(bad)} (known: {sorted(DISPOSITIONS)})")
    for column in ("message", "mode", "api", "verified", "grid", "impl", "device"):
        rows[column] = rows[column].fillna("").astype(str)
    return rows, judge_staleness(Source(csv_path, read_sidecar(csv_path)), repo)


def implementation(impl, mode):
    """One name per implementation whatever a tool calls it: lower case, '_' for '-', and the fused /
    unfused mode folded in (ours + fused and ours_fused are one implementation)."""
    name = str(impl).lower().replace("-", "_")
    if mode in ("fused", "unfused") and not name.endswith("_" + mode):
        name += "_" + mode
    return name


def stamp(sources):
    """The stamp of a figure drawn from sources: each file with its GPU, commit (STALE) and date."""
    seen = dict.fromkeys(s.stamp() for s in sources if s is not None)
    return "   |   ".join(seen)
