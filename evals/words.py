"""How messages speak of a list of things: "mc, ff or lc", "all three", "did you mean ..."."""

NUMBERS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def in_words(count: int) -> str:
    """3 -> "three" (a count in a message), 12 -> "12"."""
    return NUMBERS[count] if 0 <= count < len(NUMBERS) else str(count)


def either(words: list[str] | tuple[str, ...]) -> str:
    """["mc", "ff", "lc"] -> "mc, ff or lc"."""
    return " or ".join(filter(None, [", ".join(words[:-1]), *words[-1:]]))


def did_you_mean(word: str, known: list[str] | tuple[str, ...]) -> str:
    """ " (did you mean 'openai'?)" for the known word closest to a mistyped one, or "" when
    none is close."""
    import difflib  # only for a mistake: not on every start

    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
