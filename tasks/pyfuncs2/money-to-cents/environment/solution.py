def money_to_cents(s):
    """The string `s` is an amount like `'$1,234.50'`, `'12'` or `'-$0.99'`: optional `-`,
    optional `$`, digits with optional thousands commas, and optionally `.` with one or two
    digits. Return the amount in integer cents.
    """
    raise NotImplementedError
