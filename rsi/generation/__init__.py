"""Generations: the resumable improvement cycle, the cron entry point, and the lineage across generations."""
