def handshakes(n):
    """In a room of `n` people every person shakes hands once with every other person.
    Return the number of handshakes: `n * (n - 1) // 2` (0 for 0 or 1 person).
    """
    raise NotImplementedError
