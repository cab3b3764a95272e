"""Scheduled backups and restore drills (issue 48), inside `appliance serve`.

- ``storage.py``: where backups go: a local folder and an S3-compatible bucket;
- ``retention.py``: which backups are kept (last, hourly, daily, weekly);
- ``drill.py``: a backup restored into a scratch directory and checked (`appliance backup verify`);
- ``history.py``: the runs and drills recorded in the dispatch database, health and metrics;
- ``schedule.py``: the leased job that takes, drills and prunes them.

The backup itself is appliance/backup.py's (``create_backup``), encrypted under the passphrase.
"""
