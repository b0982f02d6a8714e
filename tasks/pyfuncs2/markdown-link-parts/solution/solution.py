import re


def markdown_link_parts(s):
    match = re.search(r"\[([^\]]*)\]\(([^)]*)\)", s)
    return [match.group(1), match.group(2)] if match else None
