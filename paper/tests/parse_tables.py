"""Reads the generated tables back, independently of paper/tables.py, so the tests compare what a
reader sees with the CSV files."""
import math
import re


def markdown_rows(text):
    """Header cells and body rows (lists of cell strings) of the one table in a Markdown file."""
    lines = [l for l in text.splitlines() if l.startswith("|")]
    split = [[c.strip() for c in l.strip().strip("|").split("|")] for l in lines]
    return split[0], [r for r in split[2:]]


def latex_rows(text):
    body = text.split(r"\midrule", 1)[1].split(r"\bottomrule", 1)[0]
    return [[c.strip() for c in line.strip().rstrip("\\").split("&")] for line in body.strip().splitlines()]


def number(cell):
    """The value of a numeric cell, or None for a token such as n/s, fail, ---."""
    return float(cell) if re.fullmatch(r"-?\d+(\.\d+)?", cell) else None


def matches(cell, value):
    """True when a printed cell is value rounded to the decimals it shows."""
    shown = number(cell)
    if shown is None or value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    decimals = len(cell.split(".")[1]) if "." in cell else 0
    return abs(shown - value) <= 0.5 * 10 ** -decimals * (1 + 1e-9) + 1e-12
