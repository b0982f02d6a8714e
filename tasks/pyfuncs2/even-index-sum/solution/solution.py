def even_index_sum(xs):
    return sum(xs[::2])
