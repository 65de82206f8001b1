"""Bridges between LambdaRAG and other frameworks: LangChain, LlamaIndex and MCP, each behind its own extra.

Each bridge goes both ways where that makes sense: LambdaRAG as the other
framework's retriever (its answer's hits as that framework's documents, with
citations and chunk ids in their metadata), and the other framework's retriever
as a LambdaRAG skill (a typed term, one branch of a `Par`). They are adapters
above orchestration: they call `search`/`asearch` and build terms, and nothing
below imports them. This package imports no bridge, so it loads without extras;
importing a bridge whose extra is missing raises an ImportError naming the
extra (docs/bridges.md).
"""
