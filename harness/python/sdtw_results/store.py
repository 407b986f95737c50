"""A result file pair: <stem>.csv (a row appended and flushed as each point finishes) and <stem>.json
(the sidecar, replaced whole after each row). One writer per file: an exclusive flock on
<stem>.csv.lock, as sdtw-bench takes it (harness/src/core/lock.cpp), so a second writer fails at
once instead of interleaving rows; the kernel drops the lock however the holder exits."""
import csv
import fcntl
import json
import os
import platform
from pathlib import Path

from sdtw_results.metadata import utc_now
from sdtw_results.schema import COLUMNS, SCHEMA, fields, header


class WriterBusy(RuntimeError):
    pass


def sidecar_path(csv_path):
    return Path(csv_path).with_suffix(".json")


def _replace(path, text):
    """Writes via a temporary of this process and a rename: a reader never sees half a file."""
    tmp = Path(f"{path}.tmp.{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


class ResultsWriter:
    """Starts <csv_path> anew (header only) under its lock; append() adds a row; close() drops the lock."""

    def __init__(self, csv_path, tool, metadata, extra_columns=()):
        self.path = Path(csv_path)
        if self.path.suffix != ".csv":
            raise ValueError(f"ResultsWriter: csv_path must end in .csv, got {csv_path}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.columns = header(tuple(extra_columns))
        self.tool = tool
        self.metadata = dict(metadata, tool=tool)
        lock = Path(f"{self.path}.lock")
        self._lock = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self._lock, 512, 0).decode(errors="replace").strip() or "a process not yet named"
            os.close(self._lock)
            raise WriterBusy(f"{self.path} is being written by another process ({holder}; lock {lock}): "
                             "wait for it to finish or write elsewhere") from None
        os.ftruncate(self._lock, 0)
        os.pwrite(self._lock, f"pid {os.getpid()} on host {platform.node()}, started {utc_now()}\n".encode(), 0)
        _replace(self.path, ",".join(self.columns) + "\n")
        self.rows = 0
        self._write_sidecar()

    def append(self, row):
        """Adds one finished point (a dict by column name; tool filled in) to the CSV and the sidecar."""
        line = fields(dict(row, tool=self.tool), self.columns)
        with open(self.path, "a", newline="") as f:
            csv.writer(f, lineterminator="\n").writerow(line)
        self.rows += 1
        self._write_sidecar()

    def update_metadata(self, **keys):
        self.metadata.update(keys)
        self._write_sidecar()

    def _write_sidecar(self):
        doc = {"schema": SCHEMA, "tool": self.tool, "columns": self.columns, "metadata": self.metadata}
        _replace(sidecar_path(self.path), json.dumps(doc, indent=1) + "\n")

    def close(self):
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_results(csv_path):
    """(rows as dicts by column name, the sidecar or None). Checks that the file has every common
    column; a tool's extra columns come along."""
    path = Path(csv_path)
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a results file of {SCHEMA}: missing columns {missing}")
        rows = list(reader)
    side = sidecar_path(path)
    sidecar = json.loads(side.read_text()) if side.exists() else None
    if sidecar is not None and sidecar.get("schema") != SCHEMA:
        raise ValueError(f"{side}: schema {sidecar.get('schema')!r}, expected {SCHEMA!r}")
    return rows, sidecar
