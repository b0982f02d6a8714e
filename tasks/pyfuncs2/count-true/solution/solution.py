def count_true(flags):
    return sum(1 for f in flags if f)
