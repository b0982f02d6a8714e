def mask_email(email):
    """The string `email` has exactly one `'@'`. Hide its local part (before the `'@'`):
    keep the first and last characters and replace each character between them with `'*'`. A
    local part of one or two characters is kept as it is. The `'@'` and the domain stay
    unchanged.
    """
    raise NotImplementedError
