def tally_marks(n):
    groups = ["||||/"] * (n // 5)
    if n % 5:
        groups.append("|" * (n % 5))
    return " ".join(groups)
