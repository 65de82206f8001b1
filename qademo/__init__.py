"""The demo web app: a question page over `orchestration.search_unified.search` (run it with `lambdarag serve`)."""
