"""pytest hooks for tests/python: the header names the TFLite runtime under
test (tools/tflite_runtimes.py; TFLITE_GLES_TEST_RUNTIME picks it)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))


def pytest_report_header(config):
    import tflite_runtimes
    return f"TFLite runtime: {tflite_runtimes.version()}"
