"""The experience library (verified train solutions as a contract artifact) and its retrieval; docs/experience.md."""
