def hour_on_12h_clock(h):
    return h % 12 or 12
