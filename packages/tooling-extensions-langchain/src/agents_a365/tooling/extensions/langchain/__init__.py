"""LangChain extension."""
