def rotate_left(xs, k):
    """Return the list `xs` rotated left by `k` places (the first `k` items move to the
    end); `k` may be larger than the length; an empty list stays empty.
    """
    raise NotImplementedError
