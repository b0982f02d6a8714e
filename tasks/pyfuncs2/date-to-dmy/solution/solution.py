def date_to_dmy(s):
    year, month, day = s.split("-")
    return day + "/" + month + "/" + year
