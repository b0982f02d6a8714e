def cell_totals(cells):
    """`cells` maps each cell name to either a number or a list of cell names, meaning the
    sum of those cells (an empty list is 0). Every named cell exists and no cell depends on
    itself, directly or indirectly. Return a dict mapping every cell name to its number.
    """
    raise NotImplementedError
