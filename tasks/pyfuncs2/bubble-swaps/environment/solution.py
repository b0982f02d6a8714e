def bubble_swaps(xs):
    """Return how many swaps of neighbouring items bubble sort needs to sort the list `xs`
    ascending (that is, the number of pairs `i < j` with `xs[i] > xs[j]`).
    """
    raise NotImplementedError
