def human_bytes(n):
    """Return the byte count `n` (a non-negative integer) as a human-readable size with
    binary units: below 1024 it is `'N B'` (`'512 B'`); otherwise divide by 1024 until the
    value is below 1024 or the unit is `TB`, using the units `KB`, `MB`, `GB`, `TB`, and
    write the value with one decimal place (`1536` gives `'1.5 KB'`).
    """
    raise NotImplementedError
