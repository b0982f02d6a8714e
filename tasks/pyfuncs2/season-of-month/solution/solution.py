def season_of_month(m):
    if m in (12, 1, 2):
        return "winter"
    if m <= 5:
        return "spring"
    if m <= 8:
        return "summer"
    return "autumn"
