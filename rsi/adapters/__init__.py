"""The adapter registry (runs/adapters/): immutable adapter revisions with lineage, mutable status records.

Its own package, above the models (an adapter's id is the models' digest of its files) and below
training, which registers adapters, and evaluation, which records their promotion or rejection.
"""
