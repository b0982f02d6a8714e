def date_compact(s):
    """The string `s` is a date `'YYYY-MM-DD'`. Return it without the dashes, as
    `'YYYYMMDD'`.
    """
    raise NotImplementedError
