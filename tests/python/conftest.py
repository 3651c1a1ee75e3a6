"""Shared fixtures for the Python module's tests (run by `make test`: PYTHONPATH=build/python).

A skipped test counts as a failure here (pytest_sessionfinish below): every test must run.
"""
import json
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "data"

_skipped = []
_parity = {}  # name -> [identical, total]: printed at the end (the README's parity counts)


def count(name, identical):
    entry = _parity.setdefault(name, [0, 0])
    entry[0] += bool(identical)
    entry[1] += 1


_notes = []  # measurements reported, not asserted (times on a shared machine)


def note(text):
    _notes.append(text)


def pytest_terminal_summary(terminalreporter):
    if _parity:
        terminalreporter.section("chatwire parity against the goldens")
        for name, (ok, total) in sorted(_parity.items()):
            terminalreporter.write_line(f"{name}: {ok}/{total} identical")
    for text in _notes:
        terminalreporter.write_line(text)


def pytest_runtest_logreport(report):
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if _skipped:
        print(f"\n{len(_skipped)} skipped tests count as failures: {_skipped[:5]}")
        session.exitstatus = 1


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="session")
def data_dir():
    return DATA


def pytest_report_header(config):
    import chatwire

    return f"chatwire module: {os.path.dirname(chatwire.__file__)}"
