"""Example: serve an Agent 365 agent to a Vercel AI SDK ``useChat`` front end (``POST /agent/stream``)."""
