def ordinal_suffix(n):
    if n % 100 in (11, 12, 13):
        return str(n) + "th"
    return str(n) + {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
