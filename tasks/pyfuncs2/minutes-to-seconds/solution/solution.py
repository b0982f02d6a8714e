def minutes_to_seconds(minutes):
    return minutes * 60
