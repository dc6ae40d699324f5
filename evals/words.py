"""How messages speak of a list of things: "mc, ff or lc", "all three"."""

NUMBERS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def in_words(count: int) -> str:
    """3 -> "three" (a count in a message), 12 -> "12"."""
    return NUMBERS[count] if 0 <= count < len(NUMBERS) else str(count)


def either(words: list[str] | tuple[str, ...]) -> str:
    """["mc", "ff", "lc"] -> "mc, ff or lc"."""
    return " or ".join(filter(None, [", ".join(words[:-1]), *words[-1:]]))
