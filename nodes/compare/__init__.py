"""Before and after: compare two sides of runs, and check runs against budgets (issue 18).

Plain functions over analysis results (``nodes.perf.model.AnalysisResult`` as JSON), testable
without LangGraph: :mod:`.keys` names metrics by dotted key, :mod:`.samples` extracts them from
an analysis, :mod:`.stats` holds the statistics (bootstrap interval, Mann–Whitney U),
:mod:`.diff` builds the comparison table, :mod:`.budgets` reads and checks budgets,
:mod:`.sides` loads what a side names, :mod:`.render` writes Markdown/HTML/JSON and
:mod:`.junit` the JUnit XML.
"""
