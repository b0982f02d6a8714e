def morse_encode(text):
    """Encode the text `text` (letters A-Z in either case and spaces) in Morse code: each
    letter becomes its code (A `.-`, B `-...`, C `-.-.`, D `-..`, E `.`, F `..-.`, G `--.`,
    H `....`, I `..`, J `.---`, K `-.-`, L `.-..`, M `--`, N `-.`, O `---`, P `.--.`, Q
    `--.-`, R `.-.`, S `...`, T `-`, U `..-`, V `...-`, W `.--`, X `-..-`, Y `-.--`, Z
    `--..`), letters of a word are separated by one space and words by `' / '`. Runs of
    spaces in `text` count as one word break; leading and trailing spaces are ignored.
    """
    raise NotImplementedError
