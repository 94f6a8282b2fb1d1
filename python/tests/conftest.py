"""Shared fixtures of recur's pytest suites.

Tests marked ``gpu`` need recur's CUDA backend and a device (and the
framework they use); without them they are skipped. With the environment
variable RECUR_PYTEST_SKIP_CODE set (CTest sets 77, its SKIP_RETURN_CODE), a
run in which no test ran (all skipped or none selected) exits with that code,
so CTest reports the suite skipped, never passed.

JAX runs with jax_enable_x64, so that a float64 array handed to JAX stays
float64 (JAX's default turns it into float32) and the JAX tests compare
like with like against NumPy.
"""

import os
import zlib

import numpy as np
import pytest

import recur

try:
    import jax

    jax.config.update("jax_enable_x64", True)
except ImportError:
    pass


def pytest_collection_modifyitems(config, items):
    if recur.cuda_available():
        return
    why = (
        "recur was built without CUDA"
        if not recur._recur.cuda_compiled()
        else f"no CUDA device: {recur._recur.cuda_device_description()}"
    )
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=why))


def pytest_sessionfinish(session, exitstatus):
    code = os.environ.get("RECUR_PYTEST_SKIP_CODE")
    if not code:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = reporter.stats if reporter else {}
    ran = sum(len(stats.get(k, [])) for k in ("passed", "failed", "error", "xfailed", "xpassed"))
    if ran == 0 and exitstatus in (0, 5):
        session.exitstatus = int(code)


@pytest.fixture
def rng(request):
    """A generator seeded by the test's name (reproducible, distinct per test)."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
