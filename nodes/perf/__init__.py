"""Performance data: the typed model every format becomes, the parsers, and the metrics."""
