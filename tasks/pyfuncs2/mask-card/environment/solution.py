def mask_card(s):
    """Return the string `s` with every character except the last four replaced by `#`
    (strings of four or fewer characters are unchanged).
    """
    raise NotImplementedError
