def scale_list(xs):
    """Return the numbers of `xs` each divided by the largest of them, as floats; if the
    list is empty or its largest value is 0, return a list of zeros of the same length.
    """
    raise NotImplementedError
