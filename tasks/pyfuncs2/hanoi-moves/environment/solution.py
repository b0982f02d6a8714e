def hanoi_moves(n, source="A", target="C", spare="B"):
    """Return the list of moves that solves the Towers of Hanoi for `n` discs from peg `'A'`
    to peg `'C'` using peg `'B'`, with the classic recursive solution; each move is a two-
    letter string like `'AC'` (from, to).
    """
    raise NotImplementedError
