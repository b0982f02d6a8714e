def sliding_window_max(xs, k):
    """Return the list of the maxima of every window of `k` neighbouring items of `xs`, from
    left to right (empty when `k` exceeds the length).
    """
    raise NotImplementedError
