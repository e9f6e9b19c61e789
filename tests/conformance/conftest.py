import pytest

import conformance_client


@pytest.fixture(autouse=True)
def _close_websockets():
    """Every WebSocket a case opened is closed after it (the suites close some, not all)."""
    yield
    conformance_client.close_all()
