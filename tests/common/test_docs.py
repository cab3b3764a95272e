import dataclasses
from pathlib import Path

from appliance.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_every_setting_is_documented_in_the_operations_manual() -> None:
    manual = (ROOT / "docs" / "operations.md").read_text()
    missing = [f.name for f in dataclasses.fields(Settings) if f"APPLIANCE_{f.name.upper()}" not in manual]
    assert missing == []


def test_the_readme_opens_with_the_two_commands_a_newcomer_types() -> None:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("## Start here")
    assert "make run" in readme[start : start + 400]
    assert "make test" in readme[start : start + 400]
