"""What several test modules share, in one place: import it as ``tests.helpers.<module>``.

A test module never imports another test module (tests/test_test_helpers.py checks it): what two
need lives here, and the fixtures they share in tests/conftest.py.

- ``browser``: headless Chromium over the DevTools pipe and the page checker;
- ``env``: the environment a test runs PerfScout in, without the user's model or store settings;
- ``processes``: whether a process is still alive;
- ``report_sample``: a synthetic AnalysisResult with every section filled.
"""
