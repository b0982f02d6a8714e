import re


def extract_hashtags(text):
    out = []
    for tag in re.findall(r"#(\w+)", text):
        tag = tag.lower()
        if tag not in out:
            out.append(tag)
    return out
