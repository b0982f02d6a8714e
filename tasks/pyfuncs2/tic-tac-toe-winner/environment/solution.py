def tic_tac_toe_winner(board):
    """`board` is three strings of three characters, each `'X'`, `'O'` or `'.'` (empty).
    Return `'X'` or `'O'` when that player has three in a row (a row, a column or a
    diagonal), or `None` when nobody has; no board has two winners.
    """
    raise NotImplementedError
