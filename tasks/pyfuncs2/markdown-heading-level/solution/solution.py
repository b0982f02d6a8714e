def markdown_heading_level(line):
    level = len(line) - len(line.lstrip("#"))
    if 1 <= level <= 6 and line[level : level + 1] == " ":
        return level
    return 0
