def earlier_date(a, b):
    return a if a <= b else b
