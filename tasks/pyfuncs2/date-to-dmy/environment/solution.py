def date_to_dmy(s):
    """The string `s` is a date `'YYYY-MM-DD'`. Return the same date written `'DD/MM/YYYY'`.
    """
    raise NotImplementedError
