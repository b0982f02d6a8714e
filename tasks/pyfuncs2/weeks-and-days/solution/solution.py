def weeks_and_days(days):
    return [days // 7, days % 7]
