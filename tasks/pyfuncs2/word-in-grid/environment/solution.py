def word_in_grid(grid, word):
    """`grid` is a list of equal-length strings of letters. Return `True` if the non-empty
    string `word` can be spelled by starting at some cell and stepping each time to a cell
    sharing a side with the previous one, never using a cell twice in the word; otherwise
    `False`.
    """
    raise NotImplementedError
