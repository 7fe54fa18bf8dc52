"""OpenAI extension."""
