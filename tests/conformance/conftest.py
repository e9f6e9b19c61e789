import pytest

# The case bodies live in helper modules: have pytest rewrite their asserts too, so that a failure
# shows both sides ("assert '6' == '4hello'"), which is what the conformance report quotes.
pytest.register_assert_rewrite("engineio_cases", "conformance_client")

import conformance_client  # noqa: E402  (after the rewrite hook)


@pytest.fixture(autouse=True)
def _close_websockets():
    """Every WebSocket a case opened is closed after it (the suites close some, not all), and
    its HTTP connections too."""
    yield
    conformance_client.close_all()
