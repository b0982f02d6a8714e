def sort_by_given_order(xs, order):
    """Return the items of `xs` ordered by where they first appear in the list `order`;
    every copy of an item is kept. Items that `order` does not contain come after all the
    others, in their original order.
    """
    raise NotImplementedError
