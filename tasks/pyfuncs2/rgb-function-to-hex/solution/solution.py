import re


def rgb_function_to_hex(text):
    match = re.fullmatch(r"\s*rgb\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)\s*", text)
    if not match:
        return None
    values = [int(v) for v in match.groups()]
    if any(v > 255 for v in values):
        return None
    return "#" + "".join(f"{v:02x}" for v in values)
