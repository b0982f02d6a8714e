def seconds_to_minutes(seconds):
    return seconds // 60
