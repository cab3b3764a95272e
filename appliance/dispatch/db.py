"""The dispatch service's database handle; bound to a real database by create_app or the CLI."""

import peewee

database = peewee.DatabaseProxy()
MIGRATIONS = "migrations.dispatch"
