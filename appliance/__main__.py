"""`python -m appliance …`, and the frozen executable's entry (cli.py): the CLI, or the workbook
reader's child process (``_read-workbook``, appliance/dispatch/orders/workbook_child.py COMMAND),
which starts without importing the CLI: click alone costs about a fifth of a second per import."""

import sys


def main() -> None:
    if sys.argv[1:2] == ["_read-workbook"]:
        from appliance.dispatch.orders import workbook_child

        workbook_child.main(sys.argv[2:])
        return
    from appliance.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
