"""The fast tier: pure logic, no store, no kernel, no browser, no PostgreSQL (``make check``)."""
