def split_sentences(text):
    """Split the string `text` into sentences: a sentence ends at a `.`, `!` or `?` (a run
    of them, such as `'?!'` or `'...'`, ends one sentence and stays with it). Return the
    sentences with surrounding whitespace stripped, in order, leaving out empty ones;
    trailing text without an end mark is a last sentence.
    """
    raise NotImplementedError
