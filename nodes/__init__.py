"""The graph's nodes, one module each, and the plain tools they call (``nodes.perf`` …)."""
