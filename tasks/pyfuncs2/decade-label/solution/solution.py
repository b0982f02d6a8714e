def decade_label(year):
    text = str(year)
    return text[:-1] + "0s"
