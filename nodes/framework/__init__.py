"""What every node shares: the one stage runner (``stage``), the typed runtime context
(``context``), the typed failures a stage raises (``errors``), the shapes of a state update
(``common``) and the model-call deadline (``model_call``).

The graph's nodes are the modules at ``nodes/``'s top, one per ``graph.enums.Node`` member; the
helpers of the two run stages are in ``nodes/run_stages``; the toolkits (``nodes/perf``,
``collect``, ``code``, ``android``, ``report``, ``routing``, ``compare``) are plain functions that
import nothing from here but ``context`` and ``errors``.
"""
