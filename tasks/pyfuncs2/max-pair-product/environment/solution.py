def max_pair_product(xs):
    """Return the largest product `xs[i] * xs[j]` of two numbers at different positions `i
    != j` of the list `xs`, which has at least two numbers. Mind that two negative numbers
    make a positive product.
    """
    raise NotImplementedError
