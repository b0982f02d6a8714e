def names_older_than(people, age):
    """`people` is a list of dicts with the keys `'name'` (a string) and `'age'` (an
    integer). Return, in their original order, the names of the people whose age is strictly
    greater than `age`.
    """
    raise NotImplementedError
