"""Words for people in hy, ru and en: the language of a request, Problem texts, status names and
number formats (docs/languages.md)."""
