import re


def parse_ints(text):
    return [int(m) for m in re.findall(r'-?\d+', text)]
