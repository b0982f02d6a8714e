def cents_to_dollars(cents):
    return f"${cents // 100}.{cents % 100:02d}"
