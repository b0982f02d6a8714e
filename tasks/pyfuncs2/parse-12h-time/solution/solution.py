def parse_12h_time(text):
    clock, half = text.split()
    h, m = clock.split(":")
    hour = int(h) % 12
    if half == "PM":
        hour += 12
    return hour * 60 + int(m)
