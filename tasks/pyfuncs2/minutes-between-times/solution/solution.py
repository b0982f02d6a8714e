def minutes_between_times(start, end):
    def minutes(t):
        h, m = t.split(":")
        return int(h) * 60 + int(m)

    return (minutes(end) - minutes(start)) % (24 * 60)
