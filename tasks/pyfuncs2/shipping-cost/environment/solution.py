def shipping_cost(kg):
    """Shipping a parcel costs 5 for the first kilogram (or less) plus 2 for every further
    kilogram or part of one. Return the cost for a parcel of `kg` kilograms (`kg` > 0): `1`
    costs 5, `1.2` and `2` cost 7.
    """
    raise NotImplementedError
