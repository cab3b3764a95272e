import peewee

from appliance.dispatch.db import database


class BaseModel(peewee.Model):
    class Meta:
        database = database
        legacy_table_names = False
