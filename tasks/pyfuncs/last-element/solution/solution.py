def last_element(items):
    return items[-1] if items else None
