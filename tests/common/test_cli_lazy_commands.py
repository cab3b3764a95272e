"""`appliance --version` and `--help` answer without importing the command modules (the executable's
start-up time depends on it), and the table --help reads from says what the modules register."""

import subprocess
import sys

from click.testing import CliRunner

from appliance.cli import COMMANDS, LazyGroup, cli, load_all_commands


def _modules_loaded_by(*args: str) -> set[str]:
    script = (
        "import sys\n"
        "from appliance.cli import cli\n"
        "try:\n"
        f"    cli({list(args)!r}, prog_name='appliance')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return set(out.split("\n"))


def test_version_and_help_import_no_command_module_nor_either_service() -> None:
    for args in (["--version"], ["--help"]):
        loaded = _modules_loaded_by(*args)
        commands = {name for name in loaded if name.startswith("appliance.cli.")} - {
            "appliance.cli._options",
            "appliance.cli._errors",
        }
        assert commands == set(), (args, commands)
        services = ("appliance.dispatch", "appliance.engine", "flask", "peewee")
        assert not any(name.startswith(services) for name in loaded)


def test_running_a_command_imports_only_its_module() -> None:
    loaded = _modules_loaded_by("migrate", "--help")
    assert "appliance.cli.admin" in loaded
    assert "appliance.cli.serve" not in loaded and "appliance.cli.export" not in loaded


def test_the_command_table_names_every_command_with_its_module_and_help() -> None:
    load_all_commands()
    assert isinstance(cli, LazyGroup)
    registered = {
        name: (command.callback.__module__ if command.callback else "", command.get_short_help_str(10**6))
        for name, command in cli.commands.items()
    }
    listed = {name: (f"appliance.cli.{entry.module}", entry.short_help) for name, entry in COMMANDS.items()}
    assert registered == listed


def test_help_lists_every_command_once() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    names = [line.split()[0] for line in result.output.split("Commands:")[1].splitlines() if line.strip()]
    assert names == sorted(COMMANDS)
