def normalize_phone(s):
    """Keep only the digits of `s`. If 10 digits remain, return them as `'(XXX) XXX-XXXX'`;
    if 11 digits starting with `1` remain, drop the 1 and do the same; otherwise return
    `None`.
    """
    raise NotImplementedError
