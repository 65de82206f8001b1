"""Providers behind the terms: LLM chat, embedders and rerankers (imported lazily by their users)."""
