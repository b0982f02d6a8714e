"""HCP contracts: schema, loading with located errors, hashing, revisions in git, semantic diff."""
