import datetime


def add_days_to_date(date, days):
    return (datetime.date.fromisoformat(date) + datetime.timedelta(days=days)).isoformat()
