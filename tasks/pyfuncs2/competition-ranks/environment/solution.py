def competition_ranks(scores):
    """`scores` maps player names to integer scores. Return `[rank, name]` pairs, highest
    score first and equal scores by name ascending. Equal scores share a rank and the next
    rank skips the shared places, so the ranks of scores 9, 7, 7, 5 are 1, 2, 2, 4.
    """
    raise NotImplementedError
