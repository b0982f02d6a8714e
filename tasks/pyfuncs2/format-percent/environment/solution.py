def format_percent(x):
    """Return the fraction `x` (0.256 means 25.6%) formatted as a percentage with exactly
    one decimal place and a `'%'` sign, as Python's `f'{x * 100:.1f}%'` writes it: `0.256`
    gives `'25.6%'`, `1` gives `'100.0%'`.
    """
    raise NotImplementedError
