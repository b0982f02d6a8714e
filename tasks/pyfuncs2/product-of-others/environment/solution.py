def product_of_others(xs):
    """Return a list of the same length as the integer list `xs` whose item `i` is the
    product of all the numbers of `xs` except the one at position `i` (1 for a one-item
    list). Zeros must work: a zero elsewhere makes the product 0.
    """
    raise NotImplementedError
