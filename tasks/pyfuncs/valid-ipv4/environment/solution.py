def is_valid_ipv4(s):
    """Return `True` if `s` is a dotted-decimal IPv4 address: exactly four parts separated by
    dots, each made only of digits, with a value from 0 to 255 and no leading zero (except
    '0' itself). Else `False`.
    """
    raise NotImplementedError
