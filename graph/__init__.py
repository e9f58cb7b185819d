"""The PerfScout state machine: state schema, enums, pure policies and the graph builder.

Nothing in this package does I/O: nodes (in ``nodes``) do the work, this package decides
where the work goes next.
"""
