def flood_fill(grid, row, col, color):
    """`grid` is a list of rows of integers. Return a new grid where the region containing
    cell (`row`, `col`) - all cells of the same value connected to it up, down, left or
    right - is set to `color`.
    """
    raise NotImplementedError
