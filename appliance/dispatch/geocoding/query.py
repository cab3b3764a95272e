"""An address as people type it, taken apart: the street's words, the house number and the
apartment. "ул. Имберти 6", "Իմբերտի փ. 6", "Imberty str. 6" and "Imberty 6, kv. 12" are one
street word ("imberti"), house 6, and (the last) apartment 12.

- Street words (улица, ул., փողոց, փ., պողոտա, street, str., ave. and the like) and the city's name
  are left out: a map names Abovyan "Աբովյան փողոց" or "улица Абовяна" or only "Abovyan", and the
  person typing may write the word or not.
- The apartment follows its word (кв., kv., apt., բն., բնակարան, квартира…) or the house number
  after a slash: "6/12" is house 6/12 when the map has one, else house 6, apartment 12.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from appliance.dispatch.geocoding.names import tokens

_STREET_WORDS_TYPED = (
    # Russian
    "ул улица пр просп проспект пер переулок пл площадь бул бульвар ш шоссе туп тупик наб набережная"
    " г город д дом"
    # Armenian
    " փ փող փողոց պ պող պողոտա նրբ նրբանցք հրապ հրապարակ խճ խճուղի փկ փակուղի թաղ թաղամաս ք քաղաք տ տուն"
    # Latin: English and the romanised Armenian and Russian words
    " st str street ave av avenue blvd boulevard lane ln sq square rd road hwy highway"
    " poghots poghotz poxoc poghotsi poghota poxota poghotay poghotai ulitsa ul prospekt prosp pr"
    " pereulok ploshchad nrbanc nrbants hraparak"
    # the city
    " ереван երևան yerevan erevan"
)
STREET_WORDS = frozenset(t for word in _STREET_WORDS_TYPED.split() for t in tokens(word))

_APARTMENT = re.compile(
    r"(?:^|[\s,;])(?:кв|квартира|kv|kvartira|apt|apartment|app|flat|բն|բնակարան|bn|bnakaran)\.?\s*"
    r"(?:№\s*)?(?P<apartment>\d+[\w-]*)",
    re.IGNORECASE,
)
_HOUSE = re.compile(r"(?P<house>\d+\s*[^\W\d_]?)(?:\s*/\s*(?P<after>\d+[^\W\d_]?))?(?![\w])")


@dataclass(frozen=True)
class Typed:
    words: list[str]  # the street's (or place's) folded words, street words left out
    houses: list[tuple[str, str | None]]  # (house number as the index folds it, apartment) to try
    apartment: str | None  # the apartment named by its word ("kv. 12"), whatever house is found

    @property
    def has_number(self) -> bool:
        return bool(self.houses)


def parse(query: str) -> Typed:
    apartment = None
    named = _APARTMENT.search(query)
    if named:
        apartment = named.group("apartment")
        query = query[: named.start()] + " " + query[named.end() :]
    houses: list[tuple[str, str | None]] = []
    house = _HOUSE.search(query)
    if house:
        number = " ".join(tokens(house.group("house")))
        after = house.group("after")
        if after:
            whole = " ".join(tokens(f"{house.group('house')}/{after}"))
            houses = [(whole, apartment), (number, apartment or after)]
        else:
            houses = [(number, apartment)]
        query = query[: house.start()] + " " + query[house.end() :]
    typed = tokens(query)
    # A street word alone is the start of a name being typed ("p" of "Pushkin"), not a street word.
    words = [w for w in typed if w not in STREET_WORDS] or typed
    return Typed(words, houses, apartment)
