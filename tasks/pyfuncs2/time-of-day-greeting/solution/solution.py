def time_of_day_greeting(hour):
    if 5 <= hour <= 11:
        return "Good morning"
    if 12 <= hour <= 17:
        return "Good afternoon"
    if 18 <= hour <= 21:
        return "Good evening"
    return "Good night"
