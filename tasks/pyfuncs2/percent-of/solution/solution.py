def percent_of(part, whole):
    return part / whole * 100
