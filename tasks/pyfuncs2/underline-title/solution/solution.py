def underline_title(title):
    return title + "\n" + "=" * len(title)
