def histogram_rectangle(heights):
    """`heights` gives the heights of bars of width 1 standing side by side. Return the area
    of the largest rectangle that fits inside the bars, aligned with them: over a run of
    neighbouring bars, its height is at most the lowest bar of the run (0 for no bars).
    """
    raise NotImplementedError
