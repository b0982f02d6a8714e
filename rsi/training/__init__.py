"""The fine-tune stage: dataset loading and masking, the LoRA recipe, SLURM jobs, the adapter registry."""
