def is_lucky_ticket(ticket):
    """A ticket number `ticket` is a string of exactly six digits. Return True if the sum of
    its first three digits equals the sum of its last three (`'123420'`: 1+2+3 = 4+2+0).
    Return False for any string that is not six digits.
    """
    raise NotImplementedError
