def text_box(s):
    border = "+" + "-" * (len(s) + 2) + "+"
    return border + "\n| " + s + " |\n" + border
