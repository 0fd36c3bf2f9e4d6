"""Fixtures of the mxgate Python suite, and the guard that a run which collects fewer tests than
--min-tests fails (ctest passes the suite's floor; a run that collects nothing exits 5 anyway)."""

import pytest

from support import Cli, Files, cli_path


def pytest_addoption(parser):
    parser.addoption(
        "--min-tests",
        type=int,
        default=0,
        help="fail unless at least this many tests are collected",
    )


def pytest_collection_modifyitems(session, config, items):
    floor = config.getoption("--min-tests")
    if len(items) < floor:
        raise pytest.UsageError(
            f"collected {len(items)} tests, fewer than --min-tests {floor}: tests were lost"
        )


@pytest.fixture(scope="session")
def cli():
    return Cli(cli_path())


@pytest.fixture
def files(tmp_path):
    return Files(tmp_path)
