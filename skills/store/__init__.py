"""The stores the skills read: corpus, index backends, entity graph, wiki, crash-safe files."""
