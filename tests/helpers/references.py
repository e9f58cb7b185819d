"""Reference values published by the reference tools, shared by the tests that assert them."""

from __future__ import annotations

#: google/perfetto test/trace_processor/diff_tests/stdlib/chrome/tests_chrome_interactions.py,
#: test_chrome_fcp_lcp_navigations: chrome_page_loads on this trace (fcp, lcp in ns; None = NULL).
TRACE_PROCESSOR_PAGE_LOADS = [
    (950000000, 950000000), (888000000, 888000000), (1031000000, 1132000000), (539000000, 539000000),
    (475000000, 475000000), (763000000, 852000000), (1005000000, 1005000000), (900000000, None),
]
