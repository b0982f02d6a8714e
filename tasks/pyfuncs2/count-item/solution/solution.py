def count_item(xs, item):
    return xs.count(item)
