"""Sandboxes that run untrusted attempt code: `local` (subprocess, bwrap, rlimits) and `docker`."""
