def compound_interest(principal, rate, n, years):
    """Return the balance after `years` years when `principal` earns yearly interest `rate`
    (0.05 is 5%) compounded `n` times a year: `principal * (1 + rate / n) ** (n * years)`,
    rounded to 2 decimals.
    """
    raise NotImplementedError
