"""Task suites: format, loading, validation, and reference checks through the real verifier."""
