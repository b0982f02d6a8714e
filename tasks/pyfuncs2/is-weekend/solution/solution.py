def is_weekend(day):
    return day.strip().lower() in ("saturday", "sunday")
