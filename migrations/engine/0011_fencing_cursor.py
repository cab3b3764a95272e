"""The nonce fencing's scan of a wallet's history is incremental (issue 29): a bounded number of
blocks per pass, the block reached kept on the wallet so that the next pass resumes there instead
of starting again from the backup's height."""

import peewee


def up(db: peewee.Database) -> None:
    db.execute_sql("ALTER TABLE wallet ADD COLUMN scan_block BIGINT NULL")
