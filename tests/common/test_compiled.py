"""Compiled queries: the text is built once, the values are bound on every run, and rows come back
as the query would have given them, on SQLite and on PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import peewee
import pytest

from appliance.common.compiled import CompiledSelect, Slot, insert_if_new, insert_new
from appliance.common.db import UTCDateTimeField, make_database
from tests.conftest import empty_postgres

proxy = peewee.DatabaseProxy()


class Team(peewee.Model):
    name = peewee.TextField()

    class Meta:
        database = proxy


class Player(peewee.Model):
    team = peewee.ForeignKeyField(Team)
    name = peewee.TextField()
    joined_at = UTCDateTimeField()
    goals = peewee.IntegerField(default=0)

    class Meta:
        database = proxy


class Ticket(peewee.Model):
    code = peewee.CharField(primary_key=True)
    seat = peewee.IntegerField()

    class Meta:
        database = proxy


PLAYER_WITH_TEAM = CompiledSelect(
    lambda: (
        Player.select(Player, Team)
        .join(Team)
        .where((Player.name == Slot("name")) & (Team.name == Slot("team")))
        .limit(1)
    )
)
JOINED_SINCE = CompiledSelect(
    lambda: (
        Player.select(Player.name)
        .where(Player.joined_at >= Slot("since", Player.joined_at))
        .order_by(Player.name)
        .tuples()
    )
)


def _backend(kind: str, tmp_path) -> peewee.Database:
    if kind == "postgres":
        return empty_postgres()
    return make_database(f"sqlite:///{tmp_path / 'compiled.db'}")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request, tmp_path):
    db = _backend(request.param, tmp_path)
    proxy.initialize(db)
    with db.connection_context():
        db.create_tables([Team, Player, Ticket])
        red, blue = Team.create(name="red"), Team.create(name="blue")
        for team, name, day in ((red, "ani", 1), (blue, "ani", 2), (blue, "aram", 3)):
            Player.create(team=team, name=name, joined_at=datetime(2026, 11, day, 9, tzinfo=UTC))
        yield db
        db.drop_tables([Ticket, Player, Team])
    db.close_all() if hasattr(db, "close_all") else db.close()


def test_a_compiled_join_gives_model_instances_with_their_joined_rows(database):
    player = PLAYER_WITH_TEAM.first(proxy, name="ani", team="blue")
    assert isinstance(player, Player)
    assert (player.name, player.team.name, player.joined_at) == (
        "ani",
        "blue",
        datetime(2026, 11, 2, 9, tzinfo=UTC),
    )


def test_first_instances_gives_what_peewee_gives_without_its_row_set_up(database):
    player, team = PLAYER_WITH_TEAM.first_instances(proxy, (Player, Team), name="ani", team="blue")
    peewees = PLAYER_WITH_TEAM.first(proxy, name="ani", team="blue")
    assert player.__data__ == peewees.__data__ and team.__data__ == peewees.team.__data__
    assert isinstance(player.joined_at, datetime) and player.joined_at.tzinfo is UTC
    assert not player.is_dirty() and player.id == peewees.id
    player.goals = 3
    player.save()  # a saved instance: an UPDATE of its row, not an INSERT
    assert Player.get_by_id(peewees.id).goals == 3
    assert PLAYER_WITH_TEAM.first_instances(proxy, (Player, Team), name="aram", team="red") is None


def test_first_instances_refuses_models_that_do_not_match_the_columns(database):
    with pytest.raises(ValueError):
        PLAYER_WITH_TEAM.first_instances(proxy, (Player,), name="ani", team="blue")


def test_each_run_binds_its_own_values_to_the_same_text(database):
    assert PLAYER_WITH_TEAM.first(proxy, name="ani", team="red").team.name == "red"
    assert PLAYER_WITH_TEAM.first(proxy, name="aram", team="blue").name == "aram"
    assert PLAYER_WITH_TEAM.first(proxy, name="aram", team="red") is None


def test_a_slot_with_a_field_converts_its_value_as_the_field_stores_it(database):
    since = datetime(2026, 11, 2, 13, 0, tzinfo=UTC).astimezone()  # any offset: stored as UTC
    assert JOINED_SINCE.all(proxy, since=since) == [("aram",)]
    assert JOINED_SINCE.all(proxy, since=datetime(2026, 11, 1, tzinfo=UTC)) == [("ani",), ("ani",), ("aram",)]


def test_the_text_is_built_once_per_kind_of_database(database):
    built = []
    query = CompiledSelect(lambda: built.append(1) or Team.select().where(Team.name == Slot("n")))
    for name in ("red", "blue", "red"):
        assert query.first(proxy, n=name).name == name
    assert built == [1]


def test_a_missing_value_is_an_error_not_a_silent_null(database):
    with pytest.raises(KeyError):
        PLAYER_WITH_TEAM.first(proxy, name="ani")


def test_insert_new_stores_the_row_and_gives_the_new_key_each_time(database):
    team = Team.get(Team.name == "red")
    made = []
    for n in range(3):
        player = Player(team=team, name=f"p{n}", joined_at=datetime(2026, 11, 23, 10, n, tzinfo=UTC))
        insert_new(player)
        made.append(player.id)
    assert len(set(made)) == 3
    stored = Player.get_by_id(made[2])
    assert (stored.team.name, stored.name, stored.goals, stored.joined_at.minute) == ("red", "p2", 0, 2)


def test_insert_new_keeps_a_given_key_and_refuses_a_repeated_one(database):
    insert_new(Ticket(code="A-1", seat=7))
    assert Ticket.get_by_id("A-1").seat == 7
    with pytest.raises(peewee.IntegrityError), database.atomic():
        insert_new(Ticket(code="A-1", seat=8))
    assert Ticket.get_by_id("A-1").seat == 7


def test_insert_if_new_writes_once_and_a_repeat_leaves_the_transaction_usable(database):
    with database.atomic():
        assert insert_if_new(Ticket(code="B-1", seat=3)) is True
        assert insert_if_new(Ticket(code="B-1", seat=4)) is False  # no error: no savepoint needed
        insert_new(Ticket(code="B-2", seat=5))  # the transaction goes on (PostgreSQL too)
    assert [(t.code, t.seat) for t in Ticket.select().order_by(Ticket.code)] == [("B-1", 3), ("B-2", 5)]


def test_insert_if_new_refuses_a_model_whose_defaults_were_not_given(database):
    team = Team.get(Team.name == "red")
    player = Player(team=team, name="late", joined_at=datetime(2026, 11, 23, tzinfo=UTC))
    del player.__data__["goals"]
    with pytest.raises(ValueError, match="every field"):
        insert_if_new(player)


def test_insert_new_leaves_a_default_it_was_not_given_to_peewee(database):
    team = Team.get(Team.name == "blue")
    player = Player(team=team, name="late", joined_at=datetime(2026, 11, 23, tzinfo=UTC))
    del player.__data__["goals"]  # as if built without its defaults
    insert_new(player)
    assert Player.get_by_id(player.id).goals == 0
