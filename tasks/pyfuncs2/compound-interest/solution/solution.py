def compound_interest(principal, rate, n, years):
    return round(principal * (1 + rate / n) ** (n * years), 2)
