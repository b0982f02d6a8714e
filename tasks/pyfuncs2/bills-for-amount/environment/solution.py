def bills_for_amount(amount):
    """Pay the whole-dollar amount `amount` (a non-negative integer) with as few bills as
    possible using 20, 10, 5 and 1 dollar bills, taking the largest bill first while it
    fits. Return the counts as a list `[twenties, tens, fives, ones]`.
    """
    raise NotImplementedError
