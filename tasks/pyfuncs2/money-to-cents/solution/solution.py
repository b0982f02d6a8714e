def money_to_cents(s):
    negative = s.startswith("-")
    s = s.lstrip("-").lstrip("$").replace(",", "")
    whole, _, frac = s.partition(".")
    cents = int(whole or "0") * 100 + int((frac + "00")[:2])
    return -cents if negative else cents
