import re


def split_sentences(text):
    parts = re.findall(r"[^.!?]*[.!?]+|[^.!?]+$", text)
    return [p.strip() for p in parts if p.strip()]
