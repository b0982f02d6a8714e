def email_domain(email):
    """Return the part of the e-mail address `email` after its last `'@'`, in lower case.
    Return the empty string if `email` has no `'@'`.
    """
    raise NotImplementedError
