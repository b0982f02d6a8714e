def sum_numbers_in_text(s):
    total, current = 0, ""
    for c in s + " ":
        if c.isdigit():
            current += c
        elif current:
            total += int(current)
            current = ""
    return total
