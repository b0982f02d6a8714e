"""Model backends behind one interface: embedded (transformers), openai (HTTP), vllm (owned server)."""
